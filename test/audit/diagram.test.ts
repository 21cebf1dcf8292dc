import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { diagram, machineDocs, machineGraph } from "../../src/audit/diagram.js";
import { paymentMachine } from "../../machines/payment.js";
import { runFlows, type Flows } from "./flows.js";

// The machine's transitions read from its raw config (not from the code under test, nor a list
// kept by hand): [from, event, to] with targetless transitions staying in their state.
type Config = { target?: string } | readonly { target?: string }[];
const expected = Object.entries(paymentMachine.config.states!).flatMap(([from, state]) =>
  Object.entries((state as { on?: Record<string, Config> }).on ?? {}).flatMap(([event, t]) =>
    (Array.isArray(t) ? t : [t]).map((branch: { target?: string }) => [from, event, branch.target ?? from] as const),
  ),
);
const states = Object.keys(paymentMachine.config.states!);
const finals = states.filter((s) => (paymentMachine.config.states![s] as { type?: string }).type === "final");

let flows: Flows;
beforeAll(async () => {
  flows = await runFlows();
});

describe("diagram", () => {
  it("the graph holds every state and transition of the machine", () => {
    const graph = machineGraph();
    expect(graph.states.map((s) => s.id).sort()).toEqual([...states].sort());
    expect(graph.transitions.map((t) => [t.source, t.event, t.target])).toEqual(expected);
    expect(graph.initial).toBe(paymentMachine.config.initial);
    expect(expected.length).toBeGreaterThanOrEqual(states.length);
  });

  it("Mermaid: every transition with its event, initial and final states, guards as labels", async () => {
    const mermaid = await diagram({ format: "mermaid" });
    expect(mermaid.startsWith("stateDiagram-v2\n")).toBe(true);
    expect(mermaid).toContain(`[*] --> ${paymentMachine.config.initial}`);
    for (const f of finals) expect(mermaid).toContain(`${f} --> [*]`);
    const lines = mermaid.split("\n");
    for (const [from, event, to] of expected) expect(lines.some((l) => l.startsWith(`  ${from} --> ${to} : ${event}`)), `${from} -${event}-> ${to}`).toBe(true);
    expect(mermaid).toContain("requires_payment_method --> payment_method_requested : TerminalAuthorizationStarted [answersAttempt and isCardPresent and isProcessorATerminal]");
    expect(mermaid).toContain("payment_method_requested --> error : AuthorizationFailed [answersAttempt]");
    expect(mermaid).toContain("succeeded --> succeeded : PaymentRefunded [answersAttempt and withinRefundable]");
  });

  it("DOT and SVG: every state and transition", async () => {
    const dot = await diagram({ format: "dot" });
    for (const [from, event, to] of expected) expect(dot).toMatch(new RegExp(`"${from}" -> "${to}" \\[label="${event}`));
    for (const f of finals) expect(dot).toContain(`"${f}" [peripheries=2]`);
    const svg = await diagram({ format: "svg" });
    expect(svg).toContain("<svg");
    for (const s of states) expect(svg).toContain(`>${s}</text>`);
    for (const [, event] of expected) expect(svg).toContain(event);
  });

  it("with a payment, its path is highlighted and numbered", async () => {
    const id = flows.payments.terminal_manual!;
    const path = await flows.engine.store.readStream(`payment-${id}`);
    const mermaid = await diagram({ format: "mermaid", path, title: id });
    // a title is YAML front matter, quoted whatever it holds (a ": " would break Mermaid's parse)
    expect((await diagram({ format: "mermaid", title: "review: v2" })).split("\n").slice(0, 3)).toEqual(["---", 'title: "review: v2"', "---"]);
    expect(mermaid).toContain("none --> requires_payment_method : 1. PaymentIntentCreated");
    expect(mermaid).toContain("requires_payment_method --> payment_method_requested : 3. TerminalAuthorizationStarted");
    expect(mermaid).toContain("payment_method_requested --> requires_capture : 4. PaymentAuthorized");
    expect(mermaid).toContain("requires_capture --> succeeded : 6. PaymentCaptured");
    expect(mermaid).toContain("succeeded --> succeeded : 8, 10. PaymentRefunded");
    expect(mermaid).toContain("class none,requires_payment_method,payment_method_requested,requires_capture,succeeded visited");
    const dot = await diagram({ format: "dot", path });
    expect(dot).toContain(`"requires_capture" -> "succeeded" [label="6. PaymentCaptured [answersAttempt and withinCapturable]", color="#d9480f"`);
    expect(dot).toMatch(/"requires_capture" -> "canceled" \[label="PaymentCanceled \[answersAttempt\]"\];/);
  });

  it("docs/ holds the diagrams generated from the current machine (run `npm run diagrams`)", async () => {
    const { markdown, svg } = await machineDocs();
    expect(await readFile(new URL("../../docs/payment-machine.md", import.meta.url), "utf8")).toBe(markdown);
    expect(await readFile(new URL("../../docs/payment-machine.svg", import.meta.url), "utf8")).toBe(svg);
  });
});
