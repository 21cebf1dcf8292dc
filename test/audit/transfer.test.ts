import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { exportEvents, importEvents, ImportRefused } from "../../src/audit/transfer.js";
import { canonicalJson } from "../../src/events/canonical-json.js";
import { chainEvents } from "../../src/events/chain.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import type { EventStore, ReadModelStore, RecordedEvent } from "../../src/store/port.js";
import { runFlows, type Flows } from "./flows.js";

let flows: Flows;
let lines: string[];

const collect = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
};

/** Every document of every projection, rebuilt from the store's events. */
async function readModelsOf(store: EventStore, readModels: ReadModelStore = createMemoryReadModels()) {
  await createProjectionRunner({ store, readModels, projections: PROJECTIONS }).catchUp();
  return Object.fromEntries(await Promise.all(PROJECTIONS.map(async (p) => [p.name, canonicalJson(await readModels.list(p.name, ""))] as const)));
}

beforeAll(async () => {
  flows = await runFlows();
  lines = await collect(exportEvents(flows.engine.store));
});

describe("export -> import", () => {
  it("gives identical streams and identical read models (memory -> memory)", async () => {
    const target = createMemoryStore();
    expect(await importEvents(target, lines)).toEqual({ streams: 16, events: lines.length, already: 0 });
    expect(await target.readAll()).toEqual(await flows.engine.store.readAll());
    expect(await readModelsOf(target)).toEqual(await readModelsOf(flows.engine.store, flows.engine.readModels));
    // and the export of the copy is the same file
    expect(await collect(exportEvents(target))).toEqual(lines);
  });

  it("exports one payment's stream", async () => {
    const id = flows.payments.retry_then_cancel!;
    const one = await collect(exportEvents(flows.engine.store, { paymentId: id }));
    expect(one.map((l) => JSON.parse(l).stream)).toEqual(Array(12).fill(`payment-${id}`));
    const target = createMemoryStore();
    await importEvents(target, one);
    expect(await target.readStream(`payment-${id}`)).toEqual((await flows.engine.store.readStream(`payment-${id}`)).map((e, i) => ({ ...e, position: i + 1 })));
  });

  it("an engine on the imported store continues the payments and their chains", async () => {
    const { createEngine } = await import("../../src/engine.js");
    const target = createMemoryStore();
    await importEvents(target, lines);
    const engine = createEngine({ store: target, clock: flows.clock, ids: flows.engine.ids });
    const id = flows.payments.reader_manual!;
    const refunded = await engine.refund({ external_account_id: "acct_b", payment_id: id, amount: "1.00" });
    expect(refunded.amount_refunded).toBe("1.00");
    const { audit } = await import("../../src/audit/audit.js");
    expect((await audit({ store: target }, id)).findings).toEqual([]);
  });

  const refusedWith = async (edited: string[], pattern: RegExp) => {
    const target = createMemoryStore();
    const error = await importEvents(target, edited).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportRefused);
    expect((error as ImportRefused).problems.join("\n")).toMatch(pattern);
    expect(await target.readAll()).toEqual([]);
  };

  it("refuses a stream whose hash chain does not verify, and appends nothing", async () => {
    const edited = lines.map((l) => (l.includes('"type":"PaymentRefunded"') ? l.replace('"amount":"5.00"', '"amount":"4.00"') : l));
    expect(edited).not.toEqual(lines);
    await refusedWith(edited, /payment-pi_\w+: edited: PaymentRefunded/);
  });

  it("refuses a stream with a removed event", async () => {
    const i = lines.findIndex((l) => l.includes('"type":"PaymentAuthorized"'));
    await refusedWith([...lines.slice(0, i), ...lines.slice(i + 1)], /revision \d+ where \d+ was expected[\s\S]*removed/);
  });

  it("refuses a stream two of whose events swapped positions (reordered), the lines left in their order: appended by position, it would be renumbered", async () => {
    const parsed = lines.map((l) => JSON.parse(l) as RecordedEvent);
    const attempt = parsed.find((e) => e.type === "CaptureAttempted")!;
    const next = parsed.find((e) => e.stream === attempt.stream && e.revision === attempt.revision + 1)!;
    const swapped = parsed.map((e) => JSON.stringify(e === attempt ? { ...e, position: next.position } : e === next ? { ...e, position: attempt.position } : e));
    await refusedWith(swapped, new RegExp(`${attempt.stream}: reordered: revision ${next.revision} is at position ${attempt.position}, not after revision ${attempt.revision}'s ${next.position}`));
  });

  it("refuses lines that are not events, naming the line and field", async () => {
    await refusedWith([...lines.slice(0, 2), "{not json", JSON.stringify({ stream: "x" })], /line 3: not JSON\n.*line 4: revision:/s);
  });

  it("refuses a stream the target store has with other events", async () => {
    const { createEngine } = await import("../../src/engine.js");
    const { sequentialIds } = await import("../../src/ids.js");
    const target = createMemoryStore();
    await createEngine({ store: target, ids: sequentialIds(1000) }).openAccount({ external_account_id: "acct_a" });
    const error = (await importEvents(target, lines).catch((e: unknown) => e)) as ImportRefused;
    expect(error.problems).toEqual(["account-acct_a: already exists in the target store with other events (from revision 0)"]);
    expect(await target.readAll()).toHaveLength(1);
  });

  it("refuses a stream the target store holds edited by hand, its recorded hash left as it was (not counted as the file's)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "cardflow-import-")), "cardflow.sqlite");
    const { events: target } = createSqliteStore({ path });
    await importEvents(target, lines);
    const refund = JSON.parse(lines.find((l) => l.includes('"type":"PaymentRefunded"'))!) as RecordedEvent;
    const db = new Database(path);
    expect(db.prepare("UPDATE events SET data = replace(data, '\"amount\":\"5.00\"', '\"amount\":\"4.00\"') WHERE id = ?").run(refund.id).changes).toBe(1);
    db.close();
    const error = (await importEvents(target, lines).catch((e: unknown) => e)) as ImportRefused;
    expect(error).toBeInstanceOf(ImportRefused);
    expect(error.problems).toEqual([`${refund.stream}: already exists in the target store with other events (from revision ${refund.revision})`]);
    await target.close();
  });

  it("refuses a stream the target store has with other events after a common start, even when the file's chain is whole (a rewritten history)", async () => {
    const target = createMemoryStore();
    await importEvents(target, lines);
    const held = (await target.readAll()).length;
    // the refund rewritten (4.00 for 5.00) and its stream's chain computed again: a file that verifies on its own
    const refund = JSON.parse(lines.find((l) => l.includes('"type":"PaymentRefunded"'))!) as RecordedEvent;
    const ofStream = lines.map((l) => JSON.parse(l) as RecordedEvent).filter((e) => e.stream === refund.stream);
    const rewritten = chainEvents(
      refund.stream,
      null,
      ofStream.map(({ id, type, version, data, metadata: { hash: _h, prev_hash: _p, ...metadata } }) => ({ id, type, version, data: id === refund.id ? { ...(data as object), amount: "4.00" } : data, metadata })),
    );
    const forged = lines.map((l) => {
      const e = JSON.parse(l) as RecordedEvent;
      const again = rewritten.find((r) => r.id === e.id);
      return again ? JSON.stringify({ ...e, data: again.data, metadata: again.metadata }) : l;
    });
    expect(await importEvents(createMemoryStore(), forged)).toMatchObject({ events: lines.length }); // whole on its own
    const error = (await importEvents(target, forged).catch((e: unknown) => e)) as ImportRefused;
    expect(error).toBeInstanceOf(ImportRefused);
    expect(error.problems).toEqual([`${refund.stream}: already exists in the target store with other events (from revision ${refund.revision})`]);
    expect(await target.readAll()).toHaveLength(held);
  });

  it("a file overlapping streams the store holds in part appends the rest of each, and says how many were there", async () => {
    const target = createMemoryStore();
    // the first events of the file: streams cut anywhere, some whole, some not begun
    const cut = Math.floor(lines.length / 3);
    expect(await importEvents(target, lines.slice(0, cut))).toMatchObject({ events: cut, already: 0 });
    // the streams it appends to: those with events past the cut
    const rest = new Set(lines.slice(cut).map((l) => (JSON.parse(l) as { stream: string }).stream));
    expect(rest.size).toBeGreaterThan(1);
    expect(await importEvents(target, lines)).toEqual({ streams: rest.size, events: lines.length, already: cut });
    const source = await flows.engine.store.readAll();
    expect(await target.readAll()).toHaveLength(source.length);
    // every stream as in the source: same events, same heads
    for (const stream of new Set(source.map((e) => e.stream))) {
      const strip = (es: RecordedEvent[]) => es.map(({ position: _p, ...e }) => e);
      expect(strip(await target.readStream(stream))).toEqual(strip(await flows.engine.store.readStream(stream)));
    }
    // again: nothing more
    expect(await importEvents(target, lines)).toEqual({ streams: 0, events: lines.length, already: lines.length });
    expect(await target.readAll()).toHaveLength(source.length);
  });

  /** A file of new account streams, each opened by one event with this id, chained on its own. */
  const openings = (accounts: [string, string][]) => {
    const template = lines.map((l) => JSON.parse(l) as RecordedEvent).find((e) => e.type === "AccountOpened")!;
    return accounts.map(([account, id], i) => {
      const [e] = chainEvents(`account-${account}`, null, [{ id, type: template.type, version: template.version, data: { ...(template.data as object), external_account_id: account }, metadata: { timestamp: template.metadata.timestamp, request_id: 7 } }]);
      return JSON.stringify({ stream: `account-${account}`, revision: 0, position: i + 1, ...e });
    });
  };

  it("refuses, appending nothing, a file whose event takes an id another stream of the store holds", async () => {
    const target = createMemoryStore();
    await importEvents(target, openings([["acct_held", "00000000-0000-4000-8000-00000000bbbb"]]));
    const file = openings([["acct_new", "00000000-0000-4000-8000-00000000aaaa"], ["acct_taken", "00000000-0000-4000-8000-00000000bbbb"]]);
    const error = (await importEvents(target, file).catch((e: unknown) => e)) as ImportRefused;
    expect(error).toBeInstanceOf(ImportRefused);
    expect(error.problems).toEqual(["account-acct_taken: event id 00000000-0000-4000-8000-00000000bbbb is already stored in stream account-acct_held"]);
    expect((await target.readAll()).map((e) => e.stream)).toEqual(["account-acct_held"]);
  });

  it("refuses a line repeated, saying so (not the gaps it makes in its stream)", async () => {
    const i = lines.findIndex((l) => l.includes('"type":"PaymentAuthorized"'));
    const { id, stream, revision } = JSON.parse(lines[i]!) as { id: string; stream: string; revision: number };
    await refusedWith([...lines, lines[i]!], new RegExp(`^line ${lines.length + 1}: event ${id} \\(${stream}@${revision}\\) again: line ${i + 1} holds it, and an export holds each event once$`));
  });

  it("refuses a file holding one event id in two streams", async () => {
    const file = openings([["acct_one", "00000000-0000-4000-8000-00000000cccc"], ["acct_two", "00000000-0000-4000-8000-00000000cccc"]]);
    await refusedWith(file, /^account-acct_two: event id 00000000-0000-4000-8000-00000000cccc is also the id of an event of account-acct_one in the file$/);
  });

  it("says what it had appended when an append fails after the checks (another writer in between)", async () => {
    const target = createMemoryStore();
    const file = openings([["acct_first", "00000000-0000-4000-8000-00000000dddd"], ["acct_raced", "00000000-0000-4000-8000-00000000eeee"]]);
    // another writer opens acct_raced between the checks and its append
    const append = target.append.bind(target);
    target.append = async (stream, events, options) => {
      if (stream === "account-acct_raced") await append(stream, [{ ...events[0]!, id: "00000000-0000-4000-8000-00000000ffff" }], { expectedRevision: "any" });
      return append(stream, events, options);
    };
    const error = (await importEvents(target, file).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^import stopped: .*account-acct_raced.*; 1 of the file's events were appended \(to 1 stream\(s\)\), the rest were not$/);
  });

  it("refuses, appending nothing, a stream other than a payment's holding an event this release cannot read; audit --all names one in a store", async () => {
    const at = { timestamp: "2026-11-30T00:00:00.000Z", request_id: 7 };
    const one = (stream: string, type: string, version: number, data: object) => {
      const [e] = chainEvents(stream, null, [{ id: "00000000-0000-4000-8000-00000000dddd", type, version, data, metadata: at }]);
      return { stream, revision: 0, position: 1, ...e! };
    };
    const cases: Array<[ReturnType<typeof one>, RegExp]> = [
      [one("account-acct_x", "AccountRenamed", 1, { external_account_id: "acct_x" }), /^account-acct_x: invalid event: AccountRenamed version 1 at revision 0 of account-acct_x is not an event this release reads/],
      [one("account-acct_x", "AccountOpened", 2, { external_account_id: "acct_x", processor: "A", currency: "USD" }), /AccountOpened version 2 .* is not an event this release reads \(version:/],
      [one("terminal-trm_x", "TerminalRegistered", 1, { terminal_id: "trm_x" }), /TerminalRegistered version 1 .* is not an event this release reads \(data\./],
    ];
    // known types where they do not belong: the service would read them as what they are not
    const opened = { external_account_id: "acct_x", processor: "A", currency: "USD" };
    const created = lines.map((l) => JSON.parse(l) as RecordedEvent).find((e) => e.type === "PaymentIntentCreated")!;
    const twice = (() => {
      const [a, b] = chainEvents("account-acct_x", null, [
        { id: "00000000-0000-4000-8000-00000000eee1", type: "AccountOpened", version: 1, data: opened, metadata: at },
        { id: "00000000-0000-4000-8000-00000000eee2", type: "AccountOpened", version: 1, data: opened, metadata: at },
      ]);
      return [a!, b!].map((e, i) => ({ stream: "account-acct_x", revision: i, position: i + 1, ...e }));
    })();
    cases.push(
      [one("account-acct_x", "PaymentIntentCreated", created.version, created.data as object), /PaymentIntentCreated .* \(the stream holds AccountOpened there\)$/],
      [one("terminal-trm_x", "AccountOpened", 1, opened), /AccountOpened .* of terminal-trm_x .* \(the stream holds TerminalRegistered there\)$/],
      [one("account-acct_x", "AccountOpened", 1, { ...opened, external_account_id: "acct_other" }), /\(its external_account_id "acct_other" is another stream's\)$/],
    );
    for (const [event, problem] of [...cases, [twice, /AccountOpened version 1 at revision 1 .* \(the stream holds its AccountOpened alone\)$/] as const]) {
      const target = createMemoryStore();
      const file = (Array.isArray(event) ? event : [event]).map((e) => JSON.stringify(e));
      const error = (await importEvents(target, file).catch((e: unknown) => e)) as ImportRefused;
      expect(error).toBeInstanceOf(ImportRefused);
      expect(error.problems).toEqual([expect.stringMatching(problem)]);
      expect(await target.readAll()).toEqual([]);
    }
    // written to a store another way: the audit names it, and compares no document of its stream
    const { auditAll } = await import("../../src/audit/audit.js");
    const store = createMemoryStore();
    const [unknown] = cases[0]!;
    await store.append(unknown.stream, [{ id: unknown.id, type: unknown.type, version: unknown.version, data: unknown.data, metadata: unknown.metadata }], { expectedRevision: "no_stream" });
    const report = await auditAll({ store, readModels: createMemoryReadModels() });
    expect(report.findings).toContainEqual(expect.objectContaining({ kind: "invalid_event", subject: "account-acct_x", revision: 0, message: expect.stringContaining("(a type it does not know)") }));
    expect(report.read_models_not_compared).toBe(1);
  });

  it("moves the store's request-id counter past the imported events' request ids", async () => {
    const highest = Math.max(...lines.map((l) => (JSON.parse(l) as RecordedEvent).metadata.request_id));
    expect(highest).toBeGreaterThan(1);
    const target = createMemoryStore();
    await importEvents(target, lines);
    expect(await target.reserveIds("request_id", 1)).toBe(highest + 1);
    // a counter already past them is left where it is
    await importEvents(target, lines);
    expect(await target.reserveIds("request_id", 1)).toBe(highest + 2);
  });
});
