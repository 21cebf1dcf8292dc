// Service endpoints (extensions): liveness, readiness and the OpenAPI document.
import { z } from "zod";
import { defineRoute, type RouteDef } from "../route.js";
import { HealthOut } from "../schemas.js";

const NoInput = z.strictObject({});
/** A probe's query (a cache-buster) is ignored: a 400 would read a live, ready process as down. */
const ProbeInput = z.looseObject({});

/** `ready` resolves when the store answers, and throws (StoreUnavailable: 503) when it does not. */
export function serviceRoutes(openApi: () => unknown, ready: () => Promise<void>): RouteDef[] {
  return [
    defineRoute({
      method: "GET",
      path: "/healthz",
      summary: "Liveness: the process answers",
      extension: true,
      auth: "none",
      input: ProbeInput,
      response: () => HealthOut,
      run: async () => ({ status: "ok" as const }),
      present: (answer) => answer,
    }),
    defineRoute({
      method: "GET",
      path: "/readyz",
      summary: "Readiness: the process can reach its store (503 while it cannot)",
      extension: true,
      auth: "none",
      input: ProbeInput,
      response: () => HealthOut,
      run: async () => {
        await ready();
        return { status: "ok" as const };
      },
      present: (answer) => answer,
    }),
    defineRoute({
      method: "GET",
      path: "/openapi.json",
      summary: "This API's OpenAPI 3.1 document",
      extension: true,
      auth: "none",
      input: NoInput,
      response: () => z.record(z.string(), z.unknown()),
      run: async () => openApi(),
      present: (answer) => answer,
    }),
  ];
}
