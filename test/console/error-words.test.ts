// The console's errors in words (src/console/app/api.ts), where they must not claim more than is
// known: a command that got no answer may have been applied (its answer lost on the way back), and
// a key the browser would not send is not a service that does not answer.
import { describe, expect, it } from "vitest";
import { ApiError, ConnectionError } from "../../src/client/index.js";
import { errorWords, signIn } from "../../src/console/app/api.js";

describe("the console's errors in words", () => {
  it("a read that got no answer changed nothing; a command that got none may have made its change", () => {
    const lost = (method: string) => errorWords(new ConnectionError(`no answer from ${method} /v2/x after 3 tries`, { cause: new TypeError("fetch failed"), method }));
    expect(lost("GET")).toEqual({ title: "The service does not answer", detail: "Nothing could be read. Check that it is running, then try again.", meta: null });
    expect(lost("POST").detail).toBe("It may or may not have made the change: look again once the service answers, before trying again.");
    expect(lost("DELETE").detail).not.toMatch(/Nothing could be/);
  });

  it("a step the status does not allow: its status and allowed next steps said once, as the API's detail says them", () => {
    const refused = new ApiError({ type: "urn:cardflow:problem:payment_intent_unexpected_state", title: "Conflict", status: 409, code: "payment_intent_unexpected_state", param: null, request_id: 7, detail: "payment pi_1 in status succeeded does not allow save_card; allowed next steps: refund", current_status: "succeeded", allowed_next_steps: ["refund"] });
    expect(errorWords(refused)).toEqual({ title: "Not allowed now", detail: "Payment pi_1 in status succeeded does not allow save_card; allowed next steps: refund.", meta: "HTTP 409 · payment_intent_unexpected_state · request 7" });
  });

  it("a key holding a character no API key has is said to be not valid, and nothing is sent", async () => {
    for (const key of ["sk_abc\u200b", "\u201csk_abc\u201d", "sk abc"]) {
      const error = await signIn(key).catch((e: unknown) => e);
      expect(errorWords(error).title, JSON.stringify(key)).toBe("That API key is not valid");
    }
  });
});
