// Capture, refund and cancel from a payment's page, as the machine allows them now: amounts are
// checked by the API's rules before the confirmation (what is typed stays, right or wrong), the
// confirmation says what will happen, a refusal comes back in words, and a partial capture says
// that the rest of the authorization was released.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Payment, PaymentAudit } from "../../client/index.js";
import type { Session } from "./api.js";
import { checkAmount, fromMinor, minor, money } from "./format.js";
import { Confirm, ErrorAlert, html, useFields } from "./ui.js";

type Command = "capture" | "refund" | "cancel";
type Pending = { command: Command; amount?: string };

/** What the answer means for the person, in a sentence. */
function outcomeOf(command: Command, after: Payment, asked?: string): string {
  if (command === "cancel") return `Canceled: the payment is now ${after.status}; nothing will be captured.`;
  if (command === "refund") return `Refunded ${money(asked ?? after.amount_refunded, after.currency)}: ${money(after.amount_refunded, after.currency)} refunded in all, ${money(after.amount_refundable, after.currency)} still refundable.`;
  const released = minor(after.amount_authorized) - minor(after.amount_captured);
  const rest = released > 0n ? ` The other ${money(fromMinor(released, after.amount_captured.split(".")[1]?.length ?? 0), after.currency)} of the authorization was released to the shopper.` : "";
  return `Captured ${money(after.amount_captured, after.currency)}: the payment is now ${after.status}.${rest}`;
}

export function Actions({ session, audit, onDone }: { session: Session; audit: PaymentAudit; onDone: () => void }) {
  const record = audit.record!;
  const ref = { external_account_id: session.account.external_account_id, payment_id: record.payment_id };
  const allowed = new Set(audit.allowed_next_steps);
  // what is typed stays through a refusal and through the payment's changes (a live refresh); when
  // its amounts change (a capture, a refund here or elsewhere), the fields not typed into, or no
  // longer allowed, offer the new ones: empty for an action not allowed (its field disabled, not
  // holding a "0.00" it could not take)
  const offer = (command: "capture" | "refund", amount: string) => (allowed.has(command) ? amount : "");
  const amounts = { capture: offer("capture", record.amount_capturable), refund: offer("refund", record.amount_refundable) };
  const offered = JSON.stringify(amounts);
  const [fields, bind, typed] = useFields(amounts, offered, (command) => allowed.has(command));
  const [problems, setProblems] = useState<{ capture?: string; refund?: string }>({});
  const [pending, setPending] = useState<Pending | null>(null);
  const [outcome, setOutcome] = useState<{ error?: unknown; done?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  // each action's button: where the focus goes once its confirmation is confirmed, whether Enter in
  // its field or the button opened it (Esc or Back return it to the field)
  const buttons = { capture: useRef<HTMLButtonElement>(null), refund: useRef<HTMLButtonElement>(null), cancel: useRef<HTMLButtonElement>(null) };

  const check = (command: "capture" | "refund", typed: string) =>
    checkAmount(typed, { like: record.amount, max: command === "capture" ? record.amount_capturable : record.amount_refundable, currency: record.currency, what: command });
  // new amounts: the problem said beside a field still typed into is checked again against them
  // (the same layout pass as useFields' reset); a field that follows them has none
  useLayoutEffect(() => setProblems((said) => {
    if (!said.capture && !said.refund) return said;
    const again: typeof said = {};
    for (const command of ["capture", "refund"] as const) {
      const checked = said[command] && typed.has(command) ? check(command, fields[command]) : null;
      if (checked && !checked.ok) again[command] = checked.problem;
    }
    return again;
  }), [offered]);

  const ask = (command: Command) => (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setOutcome(null);
    setPending(null);
    if (command === "cancel") return setPending({ command });
    const checked = check(command, fields[command]);
    setProblems({ [command]: checked.ok ? undefined : checked.problem });
    if (checked.ok) setPending({ command, amount: checked.amount });
  };

  // the payment changed while its confirmation was open (live: captured or canceled elsewhere):
  // when what it asks is no longer allowed, the confirmation closes, saying why; nothing is sent
  const changed = (() => {
    if (!pending) return null;
    if (!allowed.has(pending.command)) return `It is now ${record.status}: ${pending.command} is no longer allowed.`;
    const checked = pending.command === "cancel" ? null : check(pending.command, pending.amount!);
    return checked && !checked.ok ? checked.problem : null;
  })();

  async function run({ command, amount }: Pending) {
    setPending(null);
    setBusy(true);
    try {
      const after =
        command === "capture" ? await session.client.capture({ ...ref, amount: amount! }) :
        command === "refund" ? await session.client.refund({ ...ref, amount: amount! }) :
        await session.client.cancel(ref);
      setOutcome({ done: outcomeOf(command, after, amount) });
      if (command !== "cancel") typed.forget(command); // done with: the field offers the amount left (a live refresh may have brought it already)
    } catch (error) {
      setOutcome({ error });
    } finally {
      setBusy(false);
    }
    onDone();
  }

  const question = pending && (pending.command === "cancel"
    ? `Cancel payment ${record.payment_id}? The authorization is voided and nothing is captured.`
    : pending.command === "capture"
      ? `Capture ${money(pending.amount!, record.currency)} of payment ${record.payment_id}?${minor(pending.amount!) < minor(record.amount_capturable) ? ` The rest of the ${money(record.amount_capturable, record.currency)} authorized is released.` : ""}`
      : `Refund ${money(pending.amount!, record.currency)} of payment ${record.payment_id}?`);

  // while a command runs, the buttons are aria-disabled, not disabled: the one that asked keeps the
  // focus its confirmation gave back (a disabled button cannot hold it)
  const button = (command: Command) => ({ ref: buttons[command], disabled: !allowed.has(command), "aria-disabled": busy ? "true" : undefined });
  const amountField = (command: "capture" | "refund", label: string) => {
    const problem = problems[command];
    const id = `${command}-problem`;
    return html`<form onSubmit=${ask(command)} novalidate>
      <label>${label} (${record.currency})<input name="amount" inputmode="decimal" autocomplete="off" ...${bind(command)} disabled=${!allowed.has(command) || busy} aria-invalid=${problem ? "true" : undefined} aria-describedby=${problem ? id : undefined} /></label>
      <button type="submit" ...${button(command)}>${command === "capture" ? "Capture…" : "Refund…"}</button>
      ${problem && html`<p class="field-problem" id=${id} role="alert">${problem}</p>`}
    </form>`;
  };

  return html`<section class="card" aria-labelledby="actions-h">
    <h2 id="actions-h">Actions</h2>
    <div class="actions">
      ${amountField("capture", "Capture amount")}
      ${amountField("refund", "Refund amount")}
      <form onSubmit=${ask("cancel")}><button type="submit" class="secondary" ...${button("cancel")}>Cancel payment…</button></form>
    </div>
    <p class="muted">Allowed now: ${audit.allowed_next_steps.join(", ") || "nothing (final)"}.</p>
    ${outcome?.done && html`<div class="notice" role="status" data-testid="outcome">${outcome.done}</div>`}
    <${ErrorAlert} error=${outcome?.error} />
    ${changed && html`<div class="alert" role="alert" data-testid="not-sent">Not sent: the payment changed meanwhile. ${changed}</div>`}
    ${pending && !changed && html`<${Confirm} question=${question} confirmLabel=${`Yes, ${pending.command}`} onConfirm=${() => void run(pending)} onCancel=${() => setPending(null)} confirmedFocus=${buttons[pending.command]} />`}
  </section>`;
}
