// The machine's canonical definition (machines/definition.ts): docs/machine.json is current, every
// machine version's definition is kept in docs/machines/<hash>.json under its own hash, and
// `cardflow machine export` / `machine version` print them.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { machineDefinition, machineHash, machineJson } from "../../machines/definition.js";
import { machineTransitions } from "../../machines/transitions.js";
import { paymentMachine } from "../../machines/payment.js";
import { PaymentEvent } from "../../machines/events.js";
import { cardflow } from "./run-cli.js";

const docs = new URL("../../docs/", import.meta.url);
const definition = machineDefinition();

describe("the machine's canonical definition", () => {
  it("is docs/machine.json (run `npm run diagrams` after changing the machine)", () => {
    expect(readFileSync(new URL("machine.json", docs), "utf8")).toBe(machineJson(definition));
    expect(JSON.parse(machineJson(definition))).toEqual(definition);
  });

  it("is kept under its hash in docs/machines/, beside every earlier machine version, each under its own hash", () => {
    const kept = readdirSync(new URL("machines/", docs)).filter((f) => /^[0-9a-f]{12}\.json$/.test(f));
    expect(kept).toContain(`${machineHash(definition)}.json`);
    for (const file of kept) {
      const old = JSON.parse(readFileSync(new URL(`machines/${file}`, docs), "utf8"));
      expect(`${machineHash(old)}.json`, `docs/machines/${file} is not the definition its name hashes`).toBe(file);
    }
  });

  it("holds every state, transition (in the order the machine tries them), guard, action and event of the machine", () => {
    expect(definition.initial).toBe("none");
    expect(definition.states.map((s) => s.id)).toEqual(Object.keys(paymentMachine.root.states).sort());
    expect(definition.final_states).toEqual(["canceled"]);
    expect(definition.transitions).toHaveLength(machineTransitions().length);
    expect(definition.events.map((e) => e.type).sort()).toEqual(PaymentEvent.options.map((o) => o.shape.type.value).sort());
    const used = new Set([...definition.transitions.flatMap((t) => t.guards), ...definition.states.flatMap((s) => (s.follow_ups ?? []).flatMap((f) => f.guards))]);
    expect([...used].filter((g) => !definition.guards.includes(g))).toEqual([]);
    // the machine's own guards and actions, all used
    expect(definition.guards.filter((g) => !used.has(g))).toEqual([]);
    expect(definition.actions.filter((a) => !definition.transitions.some((t) => t.actions.includes(a)))).toEqual([]);
    // AuthorizationFailed in payment_method_requested: the retryable branch first, the decline as the fallback
    const failed = definition.transitions.filter((t) => t.source === "payment_method_requested" && t.event === "AuthorizationFailed");
    expect(failed.map((t) => [t.target, t.guards])).toEqual([
      ["requires_payment_method", ["answersAttempt", "isRetryableFailure"]],
      ["error", ["answersAttempt"]],
    ]);
    expect(definition.transitions.find((t) => t.source === "succeeded" && t.event === "PaymentRefunded")).toEqual({
      source: "succeeded",
      event: "PaymentRefunded",
      target: "succeeded",
      guards: ["answersAttempt", "withinRefundable"],
      actions: ["recordRefund", "closeAttempt"],
    });
  });

  it("has a short hash that changes with any rule: a guard, a target, an event's schema version", () => {
    const hash = machineHash(definition);
    expect(hash).toMatch(/^[0-9a-f]{12}$/);
    expect(machineHash(structuredClone(definition))).toBe(hash);
    const changed = (edit: (d: typeof definition) => void) => {
      const d = structuredClone(definition);
      edit(d);
      return machineHash(d);
    };
    expect(changed((d) => d.transitions[0]!.guards.pop())).not.toBe(hash);
    expect(changed((d) => (d.transitions[3]!.target = "error"))).not.toBe(hash);
    expect(changed((d) => (d.events[0]!.version = 2))).not.toBe(hash);
  });

  it("is printed by `cardflow machine export`, its hash by `cardflow machine version`", async () => {
    const exported = await cardflow("machine", "export");
    expect(exported.code).toBe(0);
    expect(exported.out).toBe(machineJson(definition));
    expect((await cardflow("machine", "version")).out).toBe(`${machineHash(definition)}\n`);
  });
});
