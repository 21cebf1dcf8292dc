// What the machine's definition tells its readers (machines/transitions.ts, machines/fold.ts,
// machines/failures.ts): the transition list that coverage and diagrams count from, the events a
// status takes, its tags, the failure mapping, and the stored fold's refusal of an event the
// machine does not allow. Expected values are the spec's (§3 transitions, §7 failures).
import { describe, expect, test } from "vitest";
import type { PaymentEvent } from "../../machines/events.js";
import { failureLeadsTo } from "../../machines/failures.js";
import { machineDefinition } from "../../machines/definition.js";
import { acceptedEventTypes, applyPaymentEvent, followUpRules, foldStored, guardHolds, hasTag, initialPaymentSnapshot } from "../../machines/fold.js";
import { paymentMachine } from "../../machines/payment.js";
import { PAYMENT_STATUSES, STATUS_TAGS, statusesTagged } from "../../machines/statuses.js";
import { finalStates, machineStates, machineTransitions } from "../../machines/transitions.js";

const STATUSES = ["requires_payment_method", "payment_method_requested", "requires_capture", "capture_requested", "succeeded", "error", "canceled"];

describe("the transition list (machines/transitions.ts)", () => {
  const byId = (id: string) => machineTransitions().filter((t) => t.id === id);

  test("given the machine, then its states are none and the spec's statuses plus canceled, and canceled alone is final", () => {
    expect(machineStates()).toEqual(["none", ...STATUSES]);
    expect(finalStates()).toEqual(["canceled"]);
  });

  test("given creating an intent, then it is listed as an unguarded transition from none to requires_payment_method", () => {
    expect(byId("none --PaymentIntentCreated--> requires_payment_method")).toEqual([
      { id: "none --PaymentIntentCreated--> requires_payment_method", source: "none", event: "PaymentIntentCreated", target: "requires_payment_method", guards: [] },
    ]);
  });

  test("given a capture attempt, then it is a self-transition of requires_capture guarded by one call at a time and the capturable amount", () => {
    expect(byId("requires_capture --CaptureAttempted--> requires_capture")).toEqual([
      { id: "requires_capture --CaptureAttempted--> requires_capture", source: "requires_capture", event: "CaptureAttempted", target: "requires_capture", guards: ["noAttemptInFlight", "withinCapturable"] },
    ]);
  });

  test("given a terminal's failure, then timeouts and cancellations go back to requires_payment_method and the rest to error, each answering the attempt", () => {
    const failures = machineTransitions().filter((t) => t.source === "payment_method_requested" && t.event === "AuthorizationFailed");
    expect(failures.map(({ target, guards }) => ({ target, guards }))).toEqual([
      { target: "requires_payment_method", guards: ["answersAttempt", "isRetryableFailure"] },
      { target: "error", guards: ["answersAttempt"] },
    ]);
  });

  test("given an abandoned attempt, then it closes the attempt without changing status, guarded by naming it", () => {
    expect(byId("succeeded --AttemptAbandoned--> succeeded").map((t) => t.guards)).toEqual([["abandonsAttempt"]]);
  });

  test("given every transition, then it starts and ends in a state of the machine, and canceled starts none", () => {
    const transitions = machineTransitions();
    expect(transitions.length).toBeGreaterThan(40);
    for (const t of transitions) {
      expect(STATUSES.concat("none")).toContain(t.source);
      expect(STATUSES).toContain(t.target);
      expect(t.id).toBe(`${t.source} --${t.event}--> ${t.target}`);
    }
    expect(transitions.filter((t) => t.source === "canceled")).toEqual([]);
  });
});

describe("statuses and their events (machines/fold.ts)", () => {
  test("given a status, then the events it takes are those of the spec's transitions from it", () => {
    expect(acceptedEventTypes("none")).toEqual(["PaymentIntentCreated"]);
    // the settlement, and a synchronous terminal's card save (spec §4.8: the token in the answer of a capture requested)
    expect(acceptedEventTypes("capture_requested")).toEqual(["PaymentCaptured", "CardSaveAttempted", "CardSaved", "AttemptAbandoned"]);
    expect(acceptedEventTypes("canceled")).toEqual([]);
  });

  test("given a status, then only a card being collected is tagged collecting_card, and it and a requested capture await the processor", () => {
    const tagsOf = (value: (typeof STATUSES)[number] | "none") =>
      (["awaiting_processor", "collecting_card"] as const).filter((tag) => hasTag({ value: value as never, context: initialPaymentSnapshot.context }, tag));
    expect(tagsOf("payment_method_requested")).toEqual(["awaiting_processor", "collecting_card"]);
    expect(tagsOf("capture_requested")).toEqual(["awaiting_processor"]);
    for (const value of ["none", "requires_payment_method", "requires_capture", "succeeded", "error", "canceled"]) expect(tagsOf(value)).toEqual([]);
  });

  test("given the status table the machine is built from (machines/statuses.ts), then its statuses and tags are the machine's own", () => {
    expect(PAYMENT_STATUSES).toEqual(machineStates().filter((s) => s !== "none"));
    for (const status of PAYMENT_STATUSES) expect([...paymentMachine.root.states[status]!.tags].sort()).toEqual([...STATUS_TAGS[status]].sort());
    expect(statusesTagged("awaiting_processor")).toEqual(["payment_method_requested", "capture_requested"]);
    expect(statusesTagged("collecting_card")).toEqual(["payment_method_requested"]);
  });

  test("given the machine, then what follows on its own is its own rule: an automatic capture in requires_capture, a synchronous terminal's card save once captured (capture_requested or succeeded)", () => {
    const rules = Object.fromEntries(machineDefinition().states.map((s) => [s.id, s.follow_ups]));
    expect(rules).toMatchObject({
      requires_capture: [{ command: "capture", guards: ["isAutomaticCapture"] }],
      succeeded: [{ command: "save_card", guards: ["savesCardOnTerminal"] }],
      payment_method_requested: [],
      capture_requested: [{ command: "save_card", guards: ["savesCardOnTerminal"] }],
    });
    const context = (over: object) => ({ ...initialPaymentSnapshot.context, ...over });
    const intent = { allow_saving_card: true, external_customer_id: "cus_1" } as never;
    const succeeded = (terminal_type: "A_sync" | "A_async") => ({ value: "succeeded" as const, context: context({ intent, terminal: { terminal_id: "tmr_1", terminal_type } }) });
    expect(followUpRules(succeeded("A_sync"))).toEqual([{ command: "save_card", guard: "savesCardOnTerminal" }]);
    expect(guardHolds(succeeded("A_sync"), "savesCardOnTerminal")).toBe(true);
    expect(guardHolds(succeeded("A_async"), "savesCardOnTerminal")).toBe(false);
    expect(followUpRules({ value: "error", context: initialPaymentSnapshot.context })).toEqual([]);
  });

  test("given a stored stream, when an event the machine does not allow is folded, then it is refused as corruption naming the event, status and position", () => {
    const created = {
      type: "PaymentIntentCreated",
      version: 1,
      stream: "payment-pay_1",
      revision: 0,
      data: {
        payment_id: "pay_1", external_account_id: "acct_1", amount: "10.00", currency: "USD", payment_method_types: "card", capture_method: "manual",
        processor: "B", external_transaction_id: null, external_customer_id: null, payment_method_id: null, stored_card: null, allow_saving_card: false,
        client_secret: null, date_created: "2026-01-01T00:00:00.000Z",
      },
    };
    const first = foldStored(undefined, created);
    expect(first.before).toBe("none");
    expect(first.state.status).toBe("requires_payment_method");
    expect(first.state).toEqual({ status: "requires_payment_method", context: applyPaymentEvent(initialPaymentSnapshot, created as unknown as PaymentEvent)!.context });
    const captured = { type: "PaymentCaptured", version: 1, stream: "payment-pay_1", revision: 1, data: { amount: "10.00", authorization: null } };
    expect(() => foldStored(first.state, captured)).toThrow("PaymentCaptured is not allowed after requires_payment_method (payment-pay_1@1)");
  });
});

describe("where a failure leads (spec §3, §7)", () => {
  test("given a failure without a code, then it is a plain decline: error", () => {
    expect(failureLeadsTo(null)).toBe("error");
  });

  test("given a timeout or a cancellation, then requires_payment_method; a decline or processing failure, then error", () => {
    for (const code of ["USER_TIMEOUT", "WEB_TIMEOUT", "USER_CANCEL", "POS_CANCEL"] as const) expect(failureLeadsTo(code)).toBe("requires_payment_method");
    for (const code of ["ONLINE_DECLINED", "OFFLINE_DECLINED", "REVERSAL", "API_ERROR", "APP_ERROR", "EMV_ERROR"] as const) expect(failureLeadsTo(code)).toBe("error");
  });
});
