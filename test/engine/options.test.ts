// An option given as undefined is a mistake to name, not a default to fall back on silently.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { processorsFromAdapters } from "../../src/processors/adapters.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";

describe("options given as undefined", () => {
  it("createEngine names the option (and the likely mix-up with createSimulators)", () => {
    const sims = createSimulators({ clock: manualClock(), ids: sequentialIds() });
    const mistaken = (sims as unknown as { processors?: never }).processors;
    expect(() => createEngine({ processors: mistaken })).toThrow(/createEngine: option processors is undefined.*createEngine\(\{ processors: sims \}\)/);
    expect(() => createEngine({ store: undefined })).toThrow(/option store is undefined/);
    // omitted options still take their defaults; the simulators object is the processors
    expect(() => createEngine({ processors: sims })).not.toThrow();
    expect(() => createEngine()).not.toThrow();
  });

  it("createEngine refuses processors of another shape at once, saying how adapters by processor name are passed", () => {
    const sims = createSimulators({ clock: manualClock(), ids: sequentialIds() });
    const adapters = { A: sims.get("A"), B: sims.get("B"), connect: () => undefined };
    expect(() => createEngine({ processors: null as never })).toThrow(/createEngine: option processors is null/); // not the simulators' money
    expect(() => createEngine({ processors: adapters as never })).toThrow(/createEngine: option processors must be \{ get\(processor\), connect\(report\) \}.*processorsFromAdapters\(adapters\)/);
    const wired = { get: (name: "A" | "B") => adapters[name], connect: sims.connect.bind(sims) };
    expect(() => createEngine({ processors: wired })).not.toThrow();
    expect(() => createEngine({ processors: processorsFromAdapters(adapters) })).not.toThrow();
  });

  it("a processor without an adapter, or an adapter lacking a call, is refused at once (not later a processor that did not answer)", () => {
    const sims = createSimulators({ clock: manualClock(), ids: sequentialIds() });
    const onlyB = { get: (name: "A" | "B") => (name === "B" ? sims.get("B") : (undefined as never)), connect: () => undefined };
    expect(() => createEngine({ processors: onlyB })).toThrow(/createEngine: option processors: no adapter for processor A/);
    const { refund: _, ...lacking } = sims.get("A");
    expect(() => createEngine({ processors: { get: (name) => (name === "A" ? (lacking as never) : sims.get(name)), connect: () => undefined } })).toThrow(/the adapter for processor A lacks refund/);
    expect(() => processorsFromAdapters({ B: sims.get("B") })).toThrow(/processorsFromAdapters: no adapter for processor A/);
  });

  it("an option misspelled is named, with the one likely meant (it ran on the default before); other names are let through (a spread object's)", () => {
    expect(() => createEngine({ stroe: createMemoryStore() } as never)).toThrow(/^createEngine: no option stroe \(did you mean store\?\); its options: store, readModels, processors/);
    expect(() => createSimulators({ clock: manualClock(), ids: sequentialIds(), captrues: "requested" } as never)).toThrow(/did you mean captures\?/);
    // openStores() answers { store, readModels, description }: spread into the options, as a caller may
    expect(() => createEngine({ store: createMemoryStore(), description: "an in-memory store" } as never)).not.toThrow();
    // a durable store's { events, readModels } spread in: the engine would have run on memory
    expect(() => createEngine({ events: createMemoryStore(), readModels: createMemoryReadModels() } as never)).toThrow(/^createEngine: no option events \(a store's events go in as store: /);
    // no options at all: said, not a destructuring crash
    expect(() => (createSimulators as (o?: unknown) => unknown)()).toThrow(/^createSimulators: takes its options, \{ clock, ids \} at least/);
  });

  it("createSimulators names the option", () => {
    expect(() => createSimulators({ clock: manualClock(), ids: sequentialIds(), captures: undefined })).toThrow(/createSimulators: option captures is undefined/);
  });
});
