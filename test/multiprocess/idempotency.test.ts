// Two `npm start` processes on one store (one SQLite file; one PostgreSQL database): the same
// Idempotency-Key sent concurrently to both, 2 of 4 copies to each, for create, auth, capture,
// refund and cancel. Exactly one request acts per key (checked in the stored events), every answer
// is the first answer or 409 idempotency_key_in_use, another body with the key is 422, no 5xx,
// and request ids are unique across the two processes. Prints the run's figures. And a key held by
// a SIGKILLed process's request, retried on the other: Retry-After grows with the claim's age.
import { describe, expect, it } from "vitest";
import { type Answer, client, freshStores, merchantKey, type ServerProcess, startServer, storedEvents } from "./servers.js";

const ACCOUNT = "acct_mp";
const PAYMENTS = 20; // per operation: 2 x 20 created and authorized, 20 captured and refunded, 20 canceled
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stores = await freshStores("multiprocess");

/** The event each operation appends once when it acts. */
const EFFECT = { create: "PaymentIntentCreated", auth: "PaymentAuthorized", capture: "PaymentCaptured", refund: "PaymentRefunded", cancel: "PaymentCanceled" } as const;
type Operation = keyof typeof EFFECT;

describe.each(["sqlite", "postgres"] as const)("two server processes on one %s store", (kind) => {
  it("the same Idempotency-Key sent to both at once acts exactly once; answers are the first answer or 409; no 5xx; request ids unique", { timeout: 240_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, ACCOUNT);
    // a processor latency widens the window in which the copies of a request overlap
    const servers: ServerProcess[] = await Promise.all([0, 1].map(() => startServer(store, { SIM_PROCESSOR_LATENCY_MS: "20" })));
    const http = client(key);
    const sent = new Map<string, { op: Operation; answers: Answer[] }>();
    const started = Date.now();
    try {
      /** 4 copies at once, 2 to each process; then the client's retries of a 409 until an answer. */
      async function burst(op: Operation, path: string, body: object, idempotencyKey: string): Promise<Answer> {
        const headers = { "idempotency-key": idempotencyKey };
        const full = { external_account_id: ACCOUNT, ...body };
        const answers = await Promise.all([0, 1, 0, 1].map((s) => http.post(servers[s]!.url, path, full, headers)));
        for (let retry = 0; !answers.some((a) => a.status === 200) && retry < 200; retry++) {
          await sleep(25);
          answers.push(await http.post(servers[retry % 2]!.url, path, full, headers));
        }
        sent.set(idempotencyKey, { op, answers });
        const first = answers.find((a) => a.status === 200);
        if (!first) throw new Error(`${op} ${idempotencyKey}: no answer: ${JSON.stringify(answers.map((a) => [a.status, a.body]))}`);
        return first;
      }
      const each = <T>(n: number, run: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => run(i)));

      const intent = { amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_mp" };
      const created = await each(2 * PAYMENTS, (i) => burst("create", "/v2/payment/intent", intent, `create-${i}`));
      const ids = created.map((a) => a.body.payment_id as string);
      await each(ids.length, (i) => burst("auth", "/v2/payment/auth", { payment_id: ids[i] }, `auth-${i}`));
      await Promise.all([
        each(PAYMENTS, async (i) => {
          await burst("capture", "/v2/payment/capture", { payment_id: ids[i], amount: "10.00" }, `capture-${i}`);
          // a partial refund: the machine would allow a second one, only the key prevents it
          await burst("refund", "/v2/payment/refund", { payment_id: ids[i], amount: "1.00" }, `refund-${i}`);
        }),
        each(PAYMENTS, (i) => burst("cancel", "/v2/payment/cancel", { payment_id: ids[PAYMENTS + i] }, `cancel-${i}`)),
      ]);
      const elapsedMs = Date.now() - started;

      // the same key with another request: 422, whichever process gets it
      for (const [i, s] of [0, 1].entries()) {
        const other = await http.post(servers[s]!.url, "/v2/payment/intent", { external_account_id: ACCOUNT, ...intent, amount: "11.00" }, { "idempotency-key": `create-${i}` });
        expect(other.status).toBe(422);
        expect(other.body.code).toBe("idempotency_key_reused");
      }

      const events = await storedEvents(store);
      let doubleEffects = 0;
      for (const [idempotencyKey, { op, answers }] of sent) {
        const ok = answers.filter((a) => a.status === 200);
        for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
        for (const a of answers.filter((a) => a.status !== 200)) {
          expect([a.status, a.body.code, a.headers.get("retry-after")]).toEqual([409, "idempotency_key_in_use", "1"]);
        }
        const acted = events.filter((e) => e.metadata.idempotency_key === idempotencyKey);
        const requests = new Set(acted.map((e) => e.metadata.request_id));
        const effects = acted.filter((e) => e.type === EFFECT[op]).length;
        if (requests.size !== 1 || effects !== 1) doubleEffects++;
        expect({ idempotencyKey, requests: requests.size, effects }).toEqual({ idempotencyKey, requests: 1, effects: 1 });
      }
      const all = http.answers;
      const serverErrors = all.filter((a) => a.status >= 500 || a.status === 0);
      const requestIds = all.map((a) => a.requestId);
      const duplicateRequestIds = requestIds.length - new Set(requestIds).size;
      console.log(
        `[figures] two processes on one ${kind} store: ${sent.size} keys x 4 concurrent copies, ${all.length} requests in ${elapsedMs} ms ` +
          `(${Math.round((all.length / elapsedMs) * 1000)} req/s, up to ${4 * 2 * PAYMENTS} in flight); double effects ${doubleEffects}, ` +
          `5xx ${serverErrors.length}, duplicate request ids ${duplicateRequestIds}, 409 in use ${all.filter((a) => a.status === 409).length}`,
      );
      expect(serverErrors.map((a) => [a.status, a.body])).toEqual([]);
      expect(requestIds.every((id) => id !== null && Number.isSafeInteger(Number(id)))).toBe(true);
      expect(duplicateRequestIds).toBe(0);
      expect(doubleEffects).toBe(0);
    } finally {
      const codes = await Promise.all(servers.map((s) => s.stop()));
      // a failure names its cause: the servers' own log of every request that failed inside them
      const failed = servers.flatMap((s) => s.output().split("\n").filter((line) => line.includes("request failed")));
      if (codes.some((c) => c !== 0)) console.error(servers.map((s) => s.output()).join("\n---\n"));
      else if (failed.length) console.error(failed.join("\n"));
      expect(codes).toEqual([0, 0]);
    }
  });
});

describe.each(["sqlite", "postgres"] as const)("a key held by a SIGKILLed process, retried on another (%s)", (kind) => {
  it("is 409 with Retry-After 1 while the claim is young, then half its age, and the detail names when the claim ends", { timeout: 90_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, ACCOUNT);
    // the auth's processor call takes a minute: its request is running when its process is killed
    const env = { SIM_PROCESSOR_LATENCY_MS: "60000" };
    const [doomed, survivor] = [await startServer(store, env), await startServer(store, env)];
    const http = client(key);
    try {
      const intent = { external_account_id: ACCOUNT, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_k" };
      const { payment_id } = (await http.post(survivor.url, "/v2/payment/intent", intent)).body;
      const auth = { external_account_id: ACCOUNT, payment_id };
      const claimedAt = Date.now();
      const cut = http.post(doomed.url, "/v2/payment/auth", auth, { "idempotency-key": "auth-killed" });
      for (let i = 0; i < 100 && !(await storedEvents(store)).some((e) => e.type === "AuthorizationAttempted"); i++) await sleep(50);
      doomed.child.kill("SIGKILL");
      expect((await cut).status).toBe(0);
      const young = await http.post(survivor.url, "/v2/payment/auth", auth, { "idempotency-key": "auth-killed" });
      const youngS = (Date.now() - claimedAt) / 1000;
      // 1 while the claim is under 5 s old (a loaded machine may have taken longer to get here: then half its age)
      expect([young.status, young.body.code, youngS < 4.5 ? young.headers.get("retry-after") : "1"]).toEqual([409, "idempotency_key_in_use", "1"]);
      if (youngS >= 4.5) expect(Number(young.headers.get("retry-after"))).toBeLessThanOrEqual(Math.ceil(youngS / 2));
      const ends = /its claim ends by (\S+) at the latest, if the request that holds it has stopped/.exec(young.body.detail)?.[1];
      // the lease (180 s) from the claim
      expect(Math.abs(Date.parse(ends!) - (claimedAt + 180_000))).toBeLessThan(5_000);
      await sleep(Math.max(0, claimedAt + 8_000 - Date.now()));
      const older = await http.post(survivor.url, "/v2/payment/auth", auth, { "idempotency-key": "auth-killed" });
      const ageS = (Date.now() - claimedAt) / 1000;
      expect([older.status, older.body.code]).toEqual([409, "idempotency_key_in_use"]);
      // half the claim's age (measured here a little longer than the server's)
      expect(Number(older.headers.get("retry-after"))).toBeGreaterThanOrEqual(4);
      expect(Number(older.headers.get("retry-after"))).toBeLessThanOrEqual(Math.ceil(ageS / 2));
    } finally {
      await doomed.exited;
      expect(await survivor.stop()).toBe(0);
    }
  });
});
