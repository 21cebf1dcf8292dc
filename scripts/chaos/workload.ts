// K client workers issuing random operations over a small pool of payments, so that they collide:
// create (a stored card, manual or automatic capture; a terminal; a card form the client SDK
// collects), authorize, present a card on the terminal, collect, capture (full or part), cancel,
// refund, save the card; and reads: the status read, lists of payments (newest, by status, by id),
// of a customer's cards, of terminals. Mostly steps the payment's last known status allows, some
// not (refusals are part of the history too).
import { perform, type Request, type Transport } from "./client.js";
import type { OpKind } from "./history.js";
import type { Random } from "./random.js";

type Recipe = "stored_manual" | "stored_automatic" | "terminal" | "card_form";

interface Known {
  payment_id: string;
  recipe: Recipe;
  terminal_id: string | null;
  client_secret: string | null;
  customer: string;
  status: string;
  amount: number;
  capturable: number;
  captured: number;
  refunded: number;
}

export interface WorkloadOptions {
  transport: Transport;
  account: string;
  terminals: string[];
  customers: string[];
  workers: number;
  /** How many payments are worked on at a time. */
  pool: number;
  rng: Random;
  /** True once the run's time is up (the operation under way finishes). */
  timeUp(): boolean;
}

const PLAUSIBLE: Record<string, OpKind[]> = {
  requires_payment_method: ["authorize", "collect", "cancel"],
  error: ["authorize", "collect", "cancel"],
  payment_method_requested: ["present_card", "present_card", "cancel"],
  requires_capture: ["capture", "capture", "cancel", "save_card"],
  capture_requested: ["capture"],
  succeeded: ["refund", "refund", "save_card"],
};
const ANY: OpKind[] = ["authorize", "present_card", "collect", "capture", "cancel", "refund", "save_card"];
const money = (n: number) => n.toFixed(2);

export async function runWorkload(o: WorkloadOptions): Promise<void> {
  const pool: Known[] = [];
  let ops = 0;
  const account = o.account;
  const ref = (p: Known) => ({ external_account_id: account, payment_id: p.payment_id });

  function learn(p: Known, body: Record<string, unknown> | null) {
    if (!body || body.payment_id !== p.payment_id || typeof body.status !== "string") return;
    p.status = body.status === "success" ? "succeeded" : body.status;
    for (const [field, key] of [["amount_capturable", "capturable"], ["amount_captured", "captured"], ["amount_refunded", "refunded"]] as const) {
      if (typeof body[field] === "string") p[key] = Number(body[field]);
    }
    // done with it: a payment nothing more can happen to leaves the pool for a new one
    const done = p.status === "canceled" || (p.status === "succeeded" && p.captured > 0 && p.refunded >= p.captured);
    if (done && pool.includes(p)) pool.splice(pool.indexOf(p), 1);
  }

  function create(rng: Random, worker: number, key: string): { req: Request; known: Omit<Known, "payment_id" | "client_secret"> } {
    const recipe = rng.weighted<Recipe>({ stored_manual: 4, stored_automatic: 2, terminal: 3, card_form: 2 });
    const amount = rng.int(10, 60) + rng.pick([0, 0.25, 0.5]);
    const customer = rng.pick(o.customers);
    const body: Record<string, unknown> = { external_account_id: account, amount: money(amount), capture_method: recipe === "stored_automatic" ? "automatic" : "manual", external_customer_id: customer };
    if (recipe === "terminal") body.payment_method_types = "card_present";
    else body.payment_method_types = "card";
    if (recipe.startsWith("stored")) body.payment_method_id = "pm_card_visa";
    if (recipe === "card_form") body.allow_saving_card = true;
    const req: Request = { op: ++ops, worker, kind: "create", key, payment_id: null, method: "POST", path: `/${rng.pick(["v1", "v2"])}/payment/intent`, body };
    return { req, known: { recipe, terminal_id: recipe === "terminal" ? rng.pick(o.terminals) : null, customer, status: "requires_payment_method", amount, capturable: 0, captured: 0, refunded: 0 } };
  }

  function write(rng: Random, worker: number, key: string, kind: OpKind, p: Known): Request {
    const v = rng.pick(["v1", "v2"]);
    const base = { op: ++ops, worker, kind, key, payment_id: p.payment_id, method: "POST" as const };
    switch (kind) {
      case "authorize":
        return { ...base, path: `/${v}/payment/auth`, body: { ...ref(p), ...(p.recipe === "terminal" ? { terminal_id: p.terminal_id } : {}) } };
      case "present_card": {
        const card_number = rng.chance(0.1) ? "4000000000000002" : "4242424242424242";
        return { ...base, payment_id: null, path: "/sim/terminal/present-card", body: { external_account_id: account, terminal_id: p.terminal_id ?? rng.pick(o.terminals), card_number } };
      }
      case "collect":
        return { ...base, path: "/v2/sdk/payment-method", body: { client_secret: p.client_secret ?? "cs_none", card_number: "4242424242424242" } };
      case "capture": {
        const full = p.capturable || p.amount;
        const amount = rng.chance(0.55) ? full : rng.chance(0.9) ? Math.max(0.01, Math.round(full * rng.between(0.1, 0.9) * 100) / 100) : full + 5;
        return { ...base, path: `/${v}/payment/capture`, body: { ...ref(p), amount: rng.chance(0.5) ? money(amount) : Number(money(amount)) } };
      }
      case "cancel":
        return { ...base, path: `/${v}/payment/cancel`, body: ref(p) };
      case "refund": {
        const left = Math.max(0.01, p.captured - p.refunded);
        const amount = rng.chance(0.1) ? left + 1 : Math.max(0.01, Math.round(left * rng.between(0.2, 1) * 100) / 100);
        return { ...base, path: `/${v}/payment/refund`, body: rng.chance(0.25) ? ref(p) : { ...ref(p), amount: money(amount) } };
      }
      default:
        return { ...base, kind: "save_card", path: "/v1/customer/card", body: { ...ref(p), external_customer_id: p.customer } };
    }
  }

  function read(rng: Random, worker: number): Request {
    const kind = rng.weighted<OpKind>({ read: 6, list_payments: 3, list_cards: 1, list_terminals: 1 });
    const p = pool.length ? rng.pick(pool) : null;
    const base = { op: ++ops, worker, key: null, payment_id: null, method: "GET" as const };
    const q = `external_account_id=${account}`;
    if (kind === "read" && p) return { ...base, kind, payment_id: p.payment_id, path: `/v2/payment/intent/${p.payment_id}?${q}` };
    if (kind === "list_cards") return { ...base, kind, path: `/v1/customer/card?${q}&external_customer_id=${rng.pick(o.customers)}` };
    if (kind === "list_terminals") return { ...base, kind, path: `/v2/hardware?${q}`, note: { registered: o.terminals } };
    const by = rng.weighted({ newest: 2, id: p ? 2 : 0, status: 1 });
    if (by === "id") return { ...base, kind: "list_payments", payment_id: p!.payment_id, path: `/v2/payments?${q}&q=${p!.payment_id}` };
    return { ...base, kind: "list_payments", path: `/v2/payments?${q}&limit=100${by === "status" ? `&status=${rng.pick(["requires_capture", "succeeded", "payment_method_requested"])}` : ""}` };
  }

  async function worker(w: number) {
    const rng = o.rng.fork(`worker ${w}`);
    for (let n = 0; !o.timeUp(); n++) {
      const key = `chaos-w${w}-${n}-${Math.floor(rng.next() * 1e9).toString(36)}`;
      if (rng.chance(0.35)) {
        await perform(o.transport, rng, read(rng, w));
      } else if (pool.length < o.pool || rng.chance(0.05)) {
        const { req, known } = create(rng, w, key);
        const { body } = await perform(o.transport, rng, req);
        if (body && typeof body.payment_id === "string") pool.push({ ...known, payment_id: body.payment_id, client_secret: typeof body.client_secret === "string" ? body.client_secret : null });
      } else {
        const p = rng.pick(pool);
        const kind = rng.chance(0.15) ? rng.pick(ANY) : rng.pick(PLAUSIBLE[p.status] ?? ANY);
        const { complete, body } = await perform(o.transport, rng, write(rng, w, key, kind, p));
        learn(p, body);
        // a payment the servers fail on (a seeded defect broke its stream) is left for a new one
        if (complete.status >= 500 && complete.status !== 503 && pool.includes(p)) pool.splice(pool.indexOf(p), 1);
      }
    }
  }
  await Promise.all(Array.from({ length: o.workers }, (_, w) => worker(w)));
}
