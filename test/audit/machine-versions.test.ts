// Which rules decided (issue 30): the audit shows the machine version each event records in its
// metadata ("before machine versions" when none), an event today's machine refuses but the earlier
// machine that decided it allowed is "allowed by machine <hash> at the time" (that machine rebuilt
// from its definition), and a refusal names its rule (issue 31: the guard that failed).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { machineDefinition, machineHash, MACHINE_VERSION, type MachineDefinition } from "../../machines/definition.js";
import { audit, auditAll } from "../../src/audit/audit.js";
import { formatAudit, formatStoreAudit } from "../../src/audit/format.js";
import { machineDefinitions } from "../../src/audit/machine-history.js";
import { eventsStore } from "../../src/audit/source.js";
import { chainEvents } from "../../src/events/chain.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { runFlows } from "./flows.js";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../projections/customer-cards.js";
import { defineProjection, type Projection } from "../../projections/projection.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { foldProjections } from "../../src/audit/read-models.js";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import { feedAudit } from "../../src/webhooks/feed-audit.js";
import { FEED, feedKey, type FeedEntry } from "../../src/webhooks/feed.js";

// a payment of the v0.1.0 golden store: captured 20.00 of 25.00, refunded 5.00 then 15.00
const golden = readFileSync(new URL("../fixtures/streams/v0.1.0/events.jsonl", import.meta.url), "utf8").trim().split("\n").map((l) => JSON.parse(l) as RecordedEvent);
const manifest = JSON.parse(readFileSync(new URL("../fixtures/streams/v0.1.0/manifest.json", import.meta.url), "utf8")) as { flows: Record<string, { payment_id: string }> };
const paymentId = manifest.flows.async_terminal_manual_partial_capture_refunds!.payment_id;
const stream = `payment-${paymentId}`;
const original = golden.filter((e) => e.stream === stream);

/** The stream as a release recording machine versions would have written it: `versionAt(i)` in each event's metadata, re-chained. */
function written(events: readonly RecordedEvent[], versionAt: (i: number) => string | null): RecordedEvent[] {
  const withVersions = events.map(({ stream: _s, revision: _r, position: _p, ...e }, i) => {
    const { hash: _h, prev_hash: _ph, machine_version: _m, ...metadata } = e.metadata;
    const version = versionAt(i);
    return { ...e, metadata: { ...metadata, ...(version ? { machine_version: version } : {}) } };
  });
  return chainEvents(stream, null, withVersions).map((e, i) => ({ ...e, stream, revision: i, position: i + 1 }));
}

/** An earlier machine that let a succeeded payment be canceled (today's has no such transition). */
const current = machineDefinition();
const earlier: MachineDefinition = {
  ...current,
  transitions: [...current.transitions, { source: "succeeded", event: "PaymentCanceled", target: "canceled", guards: ["answersAttempt"], actions: ["releaseAuthorization", "closeAttempt"] }].sort(
    (a, b) => a.source.localeCompare(b.source) || a.event.localeCompare(b.event),
  ),
};
const EARLIER = machineHash(earlier);
const machines = new Map([
  [MACHINE_VERSION, current],
  [EARLIER, earlier],
]);
const canceled = (version: string | null) => ({ ...original.at(-1)!, id: "00000000-0000-4000-8000-00000000cafe", type: "PaymentCanceled", data: { cancellation_reason: null }, metadata: { ...original.at(-1)!.metadata, ...(version ? { machine_version: version } : {}) } });

describe("machine versions in the audit", () => {
  it("the package keeps today's definition under its hash (docs/machines/)", () => {
    expect(machineDefinitions().get(MACHINE_VERSION)).toEqual(current);
  });

  it("every event the engine appends records today's machine version, and the audit shows it", async () => {
    const { engine, payments } = await runFlows();
    const events = (await engine.store.readAll()).filter((e) => /^(payment|account|terminal)-/.test(e.stream));
    expect(events.length).toBeGreaterThan(50);
    expect(events.filter((e) => e.metadata.machine_version !== MACHINE_VERSION)).toEqual([]);
    const report = await audit({ store: engine.store, readModels: engine.readModels }, payments.terminal_manual!);
    expect(report.findings).toEqual([]);
    expect(report.timeline.every((r) => r.machine_version === MACHINE_VERSION && r.allowed_by_machine === null)).toBe(true);
    expect(formatAudit(report)).toContain(`machine versions: ${MACHINE_VERSION} (today's) (rev 0–${report.timeline.length - 1})\n`);
    await engine.close();
  });

  it("events before machine versions carry none, and the audit says so", async () => {
    const report = await audit({ store: eventsStore(original), machines }, paymentId);
    expect(report.findings).toEqual([]);
    expect(report.timeline.every((r) => r.machine_version === null && r.allowed_by_machine === null)).toBe(true);
    expect(formatAudit(report)).toContain(`machine versions: before machine versions (rev 0–${original.length - 1})\n`);
  });

  it("shows which machine decided each event, in runs", async () => {
    const events = written(original, (i) => (i < 4 ? null : MACHINE_VERSION));
    const report = await audit({ store: eventsStore(events), machines }, paymentId);
    expect(report.findings).toEqual([]);
    expect(report.timeline.map((r) => r.machine_version)).toEqual(events.map((_, i) => (i < 4 ? null : MACHINE_VERSION)));
    expect(formatAudit(report)).toContain(`machine versions: before machine versions (rev 0–3), ${MACHINE_VERSION} (today's) (rev 4–${events.length - 1})\n`);
    const all = await auditAll({ store: eventsStore(events), machines });
    expect(all).toMatchObject({ findings: [], machine_versions: { before_machine_versions: 4, [MACHINE_VERSION]: events.length - 4 }, allowed_by_earlier_machines: [] });
  });

  it("an event today's machine refuses, decided by an earlier machine that allowed it: allowed by that machine at the time", async () => {
    const events = written([...original, canceled(EARLIER)], () => EARLIER);
    const report = await audit({ store: eventsStore(events), machines }, paymentId);
    expect(report.findings).toEqual([]);
    expect(report.timeline.at(-1)).toMatchObject({ type: "PaymentCanceled", status_before: "succeeded", status_after: "canceled", allowed: true, allowed_by_machine: EARLIER, machine_version: EARLIER });
    expect(report.final.status).toBe("canceled");
    expect(formatAudit(report)).toContain(`succeeded → canceled (allowed by machine ${EARLIER} at the time)`);
    const all = await auditAll({ store: eventsStore(events), machines });
    expect(all.findings).toEqual([]);
    expect(all.allowed_by_earlier_machines).toEqual([{ stream, revision: original.length, type: "PaymentCanceled", machine_version: EARLIER }]);
    expect(formatStoreAudit(all)).toContain(`  PaymentCanceled at ${stream}@${original.length}: allowed by machine ${EARLIER} at the time\n`);
  });

  it("the same event is an illegal transition when today's machine decided it, or when the deciding machine's definition is missing", async () => {
    const today = written([...original, canceled(MACHINE_VERSION)], () => MACHINE_VERSION);
    expect((await audit({ store: eventsStore(today), machines }, paymentId)).findings).toEqual([
      expect.objectContaining({ kind: "illegal_transition", revision: original.length, message: `PaymentCanceled (${stream}@${original.length}) is refused: no transition for PaymentCanceled in succeeded` }),
    ]);
    const unknown = written([...original, canceled(EARLIER)], () => EARLIER);
    expect((await audit({ store: eventsStore(unknown), machines: new Map() }, paymentId)).findings).toEqual([
      expect.objectContaining({ kind: "illegal_transition", message: expect.stringContaining(`no transition for PaymentCanceled in succeeded (decided by machine ${EARLIER}, whose definition is not in docs/machines/)`) }),
    ]);
  });

  it("a refused event names the guard that failed (not an illegal transition)", async () => {
    // a third refund of 1.00 when everything captured is refunded: withinRefundable fails on the attempt
    const attempt = { ...original.at(-2)!, id: "00000000-0000-4000-8000-0000000000f1", data: { attempt_id: "att_extra", amount: "1.00", reason: null } };
    const events = written([...original, attempt], () => null);
    const report = await audit({ store: eventsStore(events), machines }, paymentId);
    expect(report.findings).toEqual([
      { kind: "guard_failed", subject: stream, event_id: attempt.id, revision: original.length, guards: ["withinRefundable"], message: `RefundAttempted (${stream}@${original.length}) is refused: guard withinRefundable failed in succeeded` },
    ]);
    expect(formatAudit(report)).toContain(`[guard_failed] RefundAttempted (${stream}@${original.length}) is refused: guard withinRefundable failed in succeeded`);
  });
});

describe("read models beside a stream only an earlier machine allowed", () => {
  // the golden store's account streams, then the payment stream with its cancel an earlier machine allowed
  const accounts = golden.filter((e) => e.stream.startsWith("account-"));
  const last = Math.max(...accounts.map((e) => e.position));
  const payment = written([...original, canceled(EARLIER)], () => EARLIER).map((e) => ({ ...e, position: last + 1 + e.revision }));
  const events = [...accounts, ...payment];
  /** Every account opened, one document all account streams write. */
  const opened = defineProjection<string[]>({ name: "accounts_opened", keyOf: (e) => (e.stream.startsWith("account-") ? "all" : null), apply: (doc = [], e) => [...doc, e.stream] });
  /** The payment's document as the service folded it when it appended the cancel: canceled, as the audit's replay says. */
  const canceledDoc = async (): Promise<PaymentDoc> => ({ state: (await audit({ store: eventsStore(events), machines }, paymentId)).final, request_id: payment.at(-1)!.metadata.request_id });

  /** Read models as the service folded them (the accounts' events today, the payment's `paymentDoc`), checkpoints at the last event. */
  async function readModelsOf(projections: readonly Projection<any>[], paymentDoc?: PaymentDoc) {
    const readModels = createMemoryReadModels();
    const fresh = foldProjections(accounts, projections);
    if (paymentDoc) fresh.get(paymentsProjection.name)?.set(paymentId, paymentDoc);
    await readModels.commitBatch(projections.map((p) => ({ projection: p.name, docs: [...fresh.get(p.name)!].map(([key, doc]) => ({ key, doc })), checkpoint: payment.at(-1)!.position })));
    return readModels;
  }

  it("the payment's documents are compared with the replay the audit computes: the cancel folded as the machine that allowed it folded it", async () => {
    // a probe: audit --all passed an edited document of such a payment, "not compared", exit 0
    const doc = await canceledDoc();
    expect(doc.state.status).toBe("canceled");
    const readModels = await readModelsOf(PROJECTIONS, doc);
    const clean = await auditAll({ store: eventsStore(events), readModels, machines });
    expect(clean).toMatchObject({ findings: [], read_models: "equal", allowed_by_earlier_machines: [expect.objectContaining({ stream, type: "PaymentCanceled" })] });
    expect(clean).not.toHaveProperty("read_models_not_compared");
    expect(await audit({ store: eventsStore(events), readModels, machines }, paymentId)).toMatchObject({ findings: [], read_models: "equal" });
    expect(formatAudit(await audit({ store: eventsStore(events), readModels, machines }, paymentId))).toContain("read models: equal to a fresh replay\n");
    // the document edited: found by both audits
    const edited: PaymentDoc = { ...doc, state: { ...doc.state, status: "succeeded" } };
    await readModels.commitBatch([{ projection: paymentsProjection.name, docs: [{ key: paymentId, doc: edited }], checkpoint: payment.at(-1)!.position }]);
    const mismatch = { kind: "read_model_mismatch", subject: `read_model:${paymentsProjection.name}`, message: `read model ${paymentsProjection.name}: document ${paymentId} differs from a fresh replay of its events` };
    expect(await auditAll({ store: eventsStore(events), readModels, machines })).toMatchObject({ findings: [mismatch], read_models: "differ" });
    expect(await audit({ store: eventsStore(events), readModels, machines }, paymentId)).toMatchObject({ findings: [mismatch], read_models: "differ" });
  });

  it("a document no event explains is still reported, and the other streams' documents compared", async () => {
    const readModels = await readModelsOf(PROJECTIONS, await canceledDoc());
    expect(await auditAll({ store: eventsStore(events), readModels, machines })).toMatchObject({ findings: [], read_models: "equal" });
    // a card on file no CardSaved explains
    const key = customerCardKey("acct_forged", "cus_forged", "pm_forged");
    const card: CustomerCardRecord = { payment_method_id: "pm_forged", external_account_id: "acct_forged", external_customer_id: "cus_forged", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "credit", payment_id: paymentId, date_created: original[0]!.metadata.timestamp };
    await readModels.commitBatch([{ projection: customerCardsProjection.name, docs: [{ key, doc: card }], checkpoint: payment.at(-1)!.position }]);
    const report = await auditAll({ store: eventsStore(events), readModels, machines });
    expect(report.findings).toEqual([{ kind: "read_model_mismatch", subject: `read_model:${customerCardsProjection.name}`, message: `read model ${customerCardsProjection.name} has 1 document(s) no event explains: ${key}` }]);
    expect(report).toMatchObject({ read_models: "differ" });
  });

  it("a document several other streams write is still compared", async () => {
    const readModels = await readModelsOf([opened]);
    expect(await auditAll({ store: eventsStore(events), readModels, machines }, { projections: [opened] })).toMatchObject({ findings: [], read_models: "equal" });
    await readModels.commitBatch([{ projection: opened.name, docs: [{ key: "all", doc: ["account-acct_forged"] }], checkpoint: payment.at(-1)!.position }]);
    expect((await auditAll({ store: eventsStore(events), readModels, machines }, { projections: [opened] })).findings).toEqual([
      { kind: "read_model_mismatch", subject: `read_model:${opened.name}`, message: `read model ${opened.name}: document all differs from a fresh replay of its events` },
    ]);
  });

  it("a document the payment stream writes too is compared; not when the machine that decided the cancel refuses it too (it has no fresh replay)", async () => {
    const every = defineProjection<string[]>({ name: "every_stream", keyOf: () => "all", apply: (doc = [], e) => [...doc, e.stream] });
    const readModels = createMemoryReadModels();
    const commit = (doc: string[]) => readModels.commitBatch([{ projection: every.name, docs: [{ key: "all", doc }], checkpoint: payment.at(-1)!.position }]);
    await commit(events.map((e) => e.stream));
    expect(await auditAll({ store: eventsStore(events), readModels, machines }, { projections: [every] })).toMatchObject({ findings: [], read_models: "equal" });
    await commit(accounts.map((e) => e.stream));
    expect(await auditAll({ store: eventsStore(events), readModels, machines }, { projections: [every] })).toMatchObject({ findings: [expect.objectContaining({ kind: "read_model_mismatch" })], read_models: "differ" });
    // the cancel decided by today's machine: an illegal transition, the shared document not compared
    const refused = [...accounts, ...written([...original, canceled(MACHINE_VERSION)], () => MACHINE_VERSION).map((e) => ({ ...e, position: last + 1 + e.revision }))];
    const report = await auditAll({ store: eventsStore(refused), readModels, machines }, { projections: [every] });
    expect(report).toMatchObject({ findings: [expect.objectContaining({ kind: "illegal_transition" })], read_models: "not_compared", read_models_not_compared: 1 });
    expect(formatStoreAudit(report)).toContain("read models: not compared (1 stream not compared: each holds an event no machine allowed, one that cannot be read, or one this release does not read)\n");
  });

  it("the webhook feed's documents too (auditAll with feedAudit): folded as the machine that allowed the cancel folded it", async () => {
    // a probe: the feed's fold threw TransitionRefused on the cancel, and the audit ended without its findings
    const doc = await canceledDoc();
    const readModels = await readModelsOf(PROJECTIONS, doc);
    const allowed = new Map([[payment.at(-1)!.position, doc.state]]);
    const streams = [...new Set(events.map((e) => e.stream))];
    const commits = new Map<string, Array<{ key: string; doc: unknown }>>(feedAudit.names.map((name) => [name, []]));
    for (const s of streams) for (const [name, docs] of feedAudit.foldStream(events.filter((e) => e.stream === s), allowed)) commits.get(name)!.push(...[...docs].map(([key, doc]) => ({ key, doc })));
    await readModels.commitBatch([...commits].map(([projection, docs]) => ({ projection, docs, checkpoint: payment.at(-1)!.position })));
    const cancelEntry = await readModels.get<FeedEntry>(FEED.events, feedKey(payment.at(-1)!.position));
    expect(cancelEntry?.event).toMatchObject({ type: "payment_intent.canceled", payment_id: paymentId });
    expect(await auditAll({ store: eventsStore(events), readModels, machines }, { feed: feedAudit })).toMatchObject({ findings: [], read_models: "equal" });
    // its entry edited: found
    await readModels.commitBatch([{ projection: FEED.events, docs: [{ key: feedKey(payment.at(-1)!.position), doc: { ...cancelEntry!, event: { ...cancelEntry!.event, type: "payment_intent.succeeded" } } }], checkpoint: payment.at(-1)!.position }]);
    expect((await auditAll({ store: eventsStore(events), readModels, machines }, { feed: feedAudit })).findings).toEqual([
      { kind: "read_model_mismatch", subject: `read_model:${FEED.events}`, message: `read model ${FEED.events}: document ${feedKey(payment.at(-1)!.position)} differs from a fresh replay of its events` },
    ]);
  });
});

describe("a payment's diagram beside a step only an earlier machine allowed", () => {
  it("draws the path the audit establishes: the step on the earlier machine's transition (dashed), every step numbered, and says so", async () => {
    // a probe: `diagram --payment` numbered the steps up to it, left the rest and the final state out, said nothing
    const { diagram } = await import("../../src/audit/diagram.js");
    // read as a store reads them (upcast)
    const events = await eventsStore(written([...original, canceled(EARLIER)], () => EARLIER)).readStream(stream);
    const n = events.length;
    const notes: string[] = [];
    const mermaid = await diagram({ format: "mermaid", path: events, machines, onNote: (note) => notes.push(note) });
    expect(mermaid).toContain(`  succeeded --> canceled : ${n}. PaymentCanceled [allowed by machine ${EARLIER} at the time, not in today's machine]\n`);
    expect(mermaid).toMatch(/class none,.*succeeded,canceled visited\n/);
    for (let step = 1; step < n; step++) expect(mermaid).toMatch(new RegExp(`: (\\d+, )*${step}(, \\d+)*\\. `));
    expect(notes).toEqual([`step ${n} (PaymentCanceled at rev ${n - 1}): succeeded → canceled is not a transition of today's machine; drawn as machine ${EARLIER} allowed it at the time (dashed)`]);
    const dot = await diagram({ format: "dot", path: events, machines });
    expect(dot).toContain(`"succeeded" -> "canceled" [label="${n}. PaymentCanceled [allowed by machine ${EARLIER} at the time, not in today's machine]", color="#d9480f", fontcolor="#d9480f", penwidth=2.5, style=dashed];`);
    // decided by today's machine: refused, not drawn, and said so
    const refused: string[] = [];
    const today = await diagram({ format: "mermaid", path: await eventsStore(written([...original, canceled(MACHINE_VERSION)], () => MACHINE_VERSION)).readStream(stream), machines, onNote: (note) => refused.push(note) });
    expect(today).not.toContain(`${n}. PaymentCanceled`);
    expect(refused).toEqual([`step ${n} (PaymentCanceled at rev ${n - 1}) is not drawn: no transition for PaymentCanceled in succeeded (cardflow audit explains it)`]);
  });
});
