// The processor B client reader SDK, simulated for merchant front-end tests (spec §4.8): the client
// collects the card with the intent's client secret (from create), then processes the payment (a
// card form's collect, card not present, processes it itself). It
// reaches the service through a transport: an in-process engine, or any function (e.g. over HTTP).
import type { PaymentRecord } from "./present/payment-record.js";
import type { Engine } from "./engine.js";

/** The SDK's calls, with the body the engine (and an HTTP endpoint) validates. */
export type ReaderCall =
  | { operation: "collect_payment_method"; body: { client_secret: string; card_number?: string; terminal_id?: string } }
  | { operation: "process_payment"; body: { client_secret: string } };

/** Sends one SDK call to the service; answers with the payment record, throws when refused. */
export type ReaderTransport = (call: ReaderCall) => Promise<PaymentRecord>;

export interface CollectOptions {
  /** A sandbox test card number (docs/test-cards.md); the simulator's default card otherwise. */
  card_number?: string;
  /** The processor B reader that reads the card; omit for a card-not-present form. */
  terminal_id?: string;
}

export interface ReaderSdk {
  /**
   * Reads a card for the intent of the client secret. On a reader the intent becomes
   * payment_method_requested (process it next); a card form (card not present) also processes it.
   */
  collectPaymentMethod(clientSecret: string, options?: CollectOptions): Promise<PaymentRecord>;
  /** Authorizes the card a reader collected (and captures it when the capture method is automatic). */
  processPayment(clientSecret: string): Promise<PaymentRecord>;
}

/** The transport of an engine in the same process. */
export function engineTransport(engine: Pick<Engine, "collectPaymentMethod" | "processPayment">): ReaderTransport {
  return (call) => (call.operation === "collect_payment_method" ? engine.collectPaymentMethod(call.body) : engine.processPayment(call.body));
}

/** An SDK talking to an engine in this process, or through a transport function. */
export function createReaderSdk(target: ReaderTransport | Pick<Engine, "collectPaymentMethod" | "processPayment">): ReaderSdk {
  const send = typeof target === "function" ? target : engineTransport(target);
  return {
    collectPaymentMethod(client_secret, { card_number, terminal_id } = {}) {
      const body = { client_secret, ...(card_number !== undefined && { card_number }), ...(terminal_id !== undefined && { terminal_id }) };
      return send({ operation: "collect_payment_method", body });
    },
    processPayment: (client_secret) => send({ operation: "process_payment", body: { client_secret } }),
  };
}
