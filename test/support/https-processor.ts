// A processor for the production tests: an HTTPS server on loopback, with a certificate of a test
// CA (test/fixtures/tls/, the CA trusted by the server under test through OUTBOUND_CA_FILE),
// speaking the API of the example adapter (src/processors/http-adapter.ts). It keeps a ledger per
// idempotency key, declines the card token `pm_declined` and the card number 4000000000000002,
// answers a malformed approval for `pm_garbled`, and can be told to fail (500) calls after acting,
// or to hold a payment's next call before acting (a call on its way: unknown to a lookup until it
// acts, and then, like a real processor, it acts only if no call under its key acted meanwhile).
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const tls = (name: string) => readFileSync(fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url)));
export const TEST_CA_FILE = fileURLToPath(new URL("../fixtures/tls/ca.pem", import.meta.url));
export const PROCESSOR_API_KEY = "proc_test_key";

interface Call {
  path: string;
  key: string | null;
  body: any;
}

const card = (last_4: string, type = "card_not_present") => ({ type, brand: "visa", last_4, exp_month: "12", exp_year: 2031, cardholder_name: null, funding: "credit" });

export async function startHttpsProcessor() {
  const calls: Call[] = [];
  const ledger = new Map<string, unknown>();
  const events: Array<{ payment_id: string; event: unknown }> = [];
  const cardsRead = new Map<string, string>();
  /** Calls that act but answer 500 (the answer lost): the reconciler must find the outcome by lookup. */
  const failAfterActing = new Set<string>();
  /** A payment's next call waits this long before acting (then `done` resolves). */
  const held = new Map<string, { ms: number; done: () => void }>();
  /** The late outcomes' feed answers 500 while true (a processor that does not answer its polls). */
  const feed = { down: false };
  /** Every call that acted (moved money or changed a card), by path and key: one per key when calls are deduplicated. */
  const acted: Array<{ path: string; key: string | null }> = [];

  const authorization = (payment: any, last_4: string, type: string) => ({
    amount_authorized: payment.amount,
    tip_amount: "0.00",
    donation_amount: "0.00",
    authorization_code: "A1B2C3",
    card: card(last_4, type),
    avs_response_code: null,
    avs_response_message: null,
  });
  const decline = { kind: "failed", last_error: "Declined by the issuer", last_error_code: "ONLINE_DECLINED" };

  function act(path: string, body: any): { status: number; answer: unknown; recorded?: unknown } {
    const manual = body.payment?.capture_method === "manual";
    switch (path) {
      case "/v1/charge": {
        const token = body.payment.payment_method_id;
        if (token === "pm_garbled") return { status: 200, answer: { kind: "authorized", approved: true } };
        const outcome = token === "pm_declined" ? decline : { kind: manual ? "authorized" : "captured", authorization: authorization(body.payment, "4242", "card_not_present") };
        return { status: 200, answer: outcome, recorded: { call: "authorize", outcome } };
      }
      case "/v1/terminal/start":
        return { status: 200, answer: {}, recorded: { call: "start_terminal", outcome: null } };
      case "/v1/terminal/cancel":
        return { status: 200, answer: {} };
      case "/v1/cards/read": {
        cardsRead.set(body.payment.payment_id, body.card_number);
        return { status: 200, answer: card(body.card_number.slice(-4), body.payment.payment_method_types === "card_present" ? "card_present" : "card_not_present") };
      }
      case "/v1/authorize": {
        const number = cardsRead.get(body.payment.payment_id) ?? "";
        const type = body.payment.payment_method_types === "card_present" ? "card_present" : "card_not_present";
        const outcome = number === "4000000000000002" ? decline : { kind: "authorized", authorization: authorization(body.payment, number.slice(-4), type) };
        return { status: 200, answer: outcome, recorded: { call: "authorize", outcome } };
      }
      case "/v1/capture":
        return { status: 200, answer: { kind: "captured" }, recorded: { call: "capture", outcome: { kind: "captured" } } };
      case "/v1/void":
        return { status: 200, answer: {}, recorded: { call: "void" } };
      case "/v1/refund":
        return { status: 200, answer: { refund_id: `re_${body.key}` }, recorded: { call: "refund", refund_id: `re_${body.key}` } };
      case "/v1/cards/save":
        return { status: 200, answer: { payment_method_id: `pm_${body.key}` }, recorded: { call: "save_card", payment_method_id: `pm_${body.key}` } };
      case "/v1/cards/retrieve": {
        const token = body.payment_method_id;
        if (!["pm_card_ok", "pm_declined", "pm_garbled"].includes(token)) return { status: 404, answer: { error: { code: "no_such_card", message: "unknown card" } } };
        return { status: 200, answer: card("4242") };
      }
      default:
        return { status: 404, answer: { error: { code: "not_found", message: path } } };
    }
  }

  const server: Server = createServer({ key: tls("processor.key"), cert: tls("processor.pem") }, (req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d)).on("end", () => {
      const send = (status: number, answer: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
      if (req.headers.authorization !== `Bearer ${PROCESSOR_API_KEY}`) return send(401, { error: { code: "unauthorized", message: "bad key" } });
      const url = new URL(req.url!, "https://processor.test");
      const key = (req.headers["idempotency-key"] as string | undefined) ?? null;
      if (req.method === "GET" && url.pathname.startsWith("/v1/calls/")) {
        const recorded = ledger.get(decodeURIComponent(url.pathname.slice("/v1/calls/".length)));
        return recorded ? send(200, recorded) : send(404, { error: { code: "never_received", message: "no such call" } });
      }
      if (req.method === "GET" && url.pathname === "/v1/events") {
        if (feed.down) return send(500, { error: { code: "internal", message: "feed down" } });
        const after = url.searchParams.get("after");
        return send(200, { events: after === null ? [] : events.slice(Number(after)), next: String(events.length) });
      }
      const body = raw ? JSON.parse(raw) : {};
      calls.push({ path: url.pathname, key, body });
      const hold = body.payment && held.get(body.payment.payment_id);
      if (hold) held.delete(body.payment.payment_id);
      // checked when acting: a call under the same key may have acted while this one waited
      const respond = () => {
        if (key && ledger.has(key)) send(200, (ledger.get(key) as any).outcome ?? ledger.get(key));
        else {
          const { status, answer, recorded } = act(url.pathname, body);
          if (key && recorded) ledger.set(key, recorded);
          if (recorded) acted.push({ path: url.pathname, key });
          if (body.payment && failAfterActing.has(body.payment.payment_id)) send(500, { error: { code: "internal", message: "lost" } });
          else send(status, answer);
        }
        hold?.done();
      };
      // a call not held acts at once
      if (hold) setTimeout(respond, hold.ms);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    calls,
    ledger,
    failAfterActing,
    feed,
    acted,
    /** Holds the payment's next call `ms` before it acts; resolves once it has. */
    holdNext: (paymentId: string, ms: number) => new Promise<void>((done) => held.set(paymentId, { ms, done })),
    /** The shopper pays on a terminal: its collection's outcome is reported later (GET /v1/events). */
    presentCard(paymentId: string, amount: string) {
      const start = [...calls].reverse().find((c) => c.path === "/v1/terminal/start" && c.body.payment.payment_id === paymentId);
      if (!start) throw new Error(`no terminal collection for ${paymentId}`);
      const outcome = { kind: "authorized", authorization: authorization({ amount }, "4242", "card_present") };
      ledger.set(start.key!, { call: "start_terminal", outcome });
      events.push({ payment_id: paymentId, event: outcome });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
