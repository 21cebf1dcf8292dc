// The service's logger writes an error's message, stack and causes without card numbers: an error
// may quote what a caller or a processor adapter wrote (an adapter's "card 4111… unreadable").
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { serviceLogger } from "../../src/observability/redact.js";

describe("the service's log", () => {
  it("an error quoting card numbers, in its message, stack and cause, is written without them", () => {
    let written = "";
    const logger = serviceLogger("info", new Writable({ write: (chunk, _encoding, done) => ((written += String(chunk)), done()) }) as never);
    const error = new Error("processor B: card 4111111111111111 unreadable", { cause: new Error("PAN 4000 0566 5566 5556 refused") });
    logger.error({ err: error, request_id: 12 }, "request failed");
    const line = JSON.parse(written) as { err: { message: string; stack: string; type: string }; request_id: number; time: number };
    expect(written).not.toMatch(/4111111111111111|4000 0566 5566 5556/);
    expect(line.err.message).toBe("processor B: card [digits removed] unreadable: PAN [digits removed] refused"); // the cause is in it
    expect(line.err.stack).toContain("[digits removed]");
    expect(line.err.type).toBe("Error");
    // what is not an error keeps its digits (the time is a number of 13 digits)
    expect(line.request_id).toBe(12);
    expect(String(line.time)).toMatch(/^\d{13}$/);
  });

  it("an error quoting an API key or a client secret is written without it, its kind kept", () => {
    let written = "";
    const logger = serviceLogger("info", new Writable({ write: (chunk, _encoding, done) => ((written += String(chunk)), done()) }) as never);
    logger.error({ err: new Error("no payment sk_4kQ9zR2mX7 nor pi_00000003_secret_Ab9Xy") }, "request failed");
    expect(written).not.toMatch(/4kQ9zR2mX7|Ab9Xy/);
    expect((JSON.parse(written) as { err: { message: string } }).err.message).toBe("no payment sk_[removed] nor pi_00000003_secret_[removed]");
  });
});
