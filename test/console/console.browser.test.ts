// The web console in a real browser: Debian's Chromium driven by playwright-core, against the
// real server (in process, on a port, with a manual clock so the as-of moments are exact). The
// payments come from the spec's asynchronous-terminal flow over the HTTP API. Writes the README's
// screenshot (docs/console-payment.png) and the bytes of the console's first load
// (.tmp/console-first-load.json).
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type Api, type Merchant } from "../http/harness.js";

const CHROMIUM = "/usr/bin/chromium";

let api: Api;
let m: Merchant;
let browser: BrowserContext;
let page: Page;
let terminalPayment: string;
let storedCharge: string;
const requests: string[] = [];

/** The spec's asynchronous terminal flow (§4.8), one minute between steps: created, auth, the card. */
async function terminalFlow(terminal: string, body: Record<string, unknown>): Promise<string> {
  const { payment_id } = (await m.post("/v2/payment/intent", { payment_method_types: "card_present", ...body })).body;
  await api.clock.advance(60_000);
  expect((await m.post("/v2/payment/auth", { payment_id, terminal_id: terminal })).body.status).toBe("payment_method_requested");
  await api.clock.advance(60_000);
  await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "4242424242424242" });
  return payment_id;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does`);
  api = await startApi();
  m = await api.merchant("acct_console");
  const terminal = await m.terminal("A_async");
  terminalPayment = await terminalFlow(terminal, { amount: "25.00", capture_method: "manual", external_payment_id: "order-1001" });
  await api.clock.advance(60_000);
  // a synchronous terminal's payment whose card is kept on file for the customer (spec §4.8)
  const sync = await m.terminal("A_sync");
  const saving = (await m.post("/v2/payment/intent", { amount: "9.50", payment_method_types: "card_present", capture_method: "automatic", external_customer_id: "cus_7", allow_saving_card: true })).body;
  const blocking = m.post("/v2/payment/auth", { payment_id: saving.payment_id, terminal_id: sync });
  await api.simulators.terminal.untilCollecting(sync);
  await m.post("/sim/terminal/present-card", { terminal_id: sync, card_number: "4242424242424242" });
  expect((await blocking).body.status).toBe("succeeded");
  const charge = (await m.post("/v1/payment/intent", { amount: "12.50", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
  await m.post("/v1/payment/auth", { payment_id: charge.payment_id });
  await m.post("/v1/payment/cancel", { payment_id: charge.payment_id });
  storedCharge = charge.payment_id;
  expect((await m.read(terminalPayment)).body.status).toBe("requires_capture");

  // a fresh profile each run (playwright passes it as --user-data-dir)
  browser = await chromium.launchPersistentContext(await mkdtemp(join(tmpdir(), "cardflow-chromium-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
    timezoneId: "UTC",
    locale: "en-US",
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("request", (r) => requests.push(new URL(r.url()).host));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Waits on the page's state, never on time: vitest's default of 1 s is too short for a loaded machine, so the limit is the test's. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 50_000, interval: 50 });
const listState = () => page.getByTestId("list-state").innerText();
const rows = () => page.locator("tbody tr").allInnerTexts();

/** Searches the payments and, unless told not to, waits until the list answers that search. */
async function search(q: string, { answered = true } = {}): Promise<void> {
  await page.getByLabel("Payment or external id").fill(q);
  await page.getByRole("button", { name: "Filter" }).click();
  if (answered) await poll(listState).toMatch(new RegExp(`^\\d+ payments?, matching “${q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}”$`));
}

/** Holds the answer of the next payment list request `match` selects until `release`; `ended`: the held answer was delivered, or the console had aborted the request. */
async function hold(match: (url: URL) => boolean): Promise<{ release: () => void; ended: Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  await page.route((url) => url.pathname === "/v2/payments" && match(url), async (route) => {
    await gate;
    try {
      await route.fulfill({ response: await route.fetch() });
    } catch {
      // the console aborted the request meanwhile: nothing to deliver
    } finally {
      end();
    }
  }, { times: 1 });
  return { release, ended };
}

describe("the web console in Chromium", () => {
  it("refuses a bad API key in words, then signs in with the good one; nothing is fetched from elsewhere", async () => {
    await page.goto(`${api.base}/console`);
    await page.getByLabel("API key").fill("sk_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/That API key is not valid\. The API key is not valid\.\s+HTTP 401 · unauthorized/);

    await page.getByLabel("API key").fill(m.key);
    await page.keyboard.press("Enter"); // the form works from the keyboard
    await page.getByRole("heading", { name: "Payments" }).waitFor();
    await poll(() => page.locator("tbody tr").count()).toBe(3);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(new Set(requests)).toEqual(new Set([new URL(api.base).host]));

    // the console's first load: the page, its script and stylesheet (gzip), as Chromium received them
    const sizes = await page.evaluate(() =>
      (performance.getEntries() as Array<PerformanceResourceTiming & { encodedBodyLength: number; decodedBodyLength: number }>).filter((e) => e.name.includes("/console")).map((e) => ({ url: e.name, transfer: e.transferSize, body: e.encodedBodyLength, decoded: e.decodedBodyLength })),
    );
    const total = sizes.reduce((sum, s) => sum + s.transfer, 0);
    await mkdir(".tmp", { recursive: true });
    await writeFile(".tmp/console-first-load.json", JSON.stringify({ total_transfer_bytes: total, resources: sizes }, null, 1));
    expect(sizes.map((s) => new URL(s.url).pathname).sort()).toEqual(["/console", "/console/console.css", "/console/console.js"]);
    expect(total).toBeGreaterThan(0);
  });

  it("lists, filters by status and finds a payment by its external id", async () => {
    await page.getByLabel("Status").selectOption("requires_capture");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(listState).toBe("1 payment, status requires_capture");
    expect(await rows()).toEqual([expect.stringContaining(terminalPayment)]);
    await page.getByLabel("Status").selectOption("");
    await search("order-1001");
    expect(await rows()).toEqual([expect.stringMatching(/requires_capture\s+25\.00 USD\s+order-1001/)]);
    await search(storedCharge);
    expect(await rows()).toEqual([expect.stringContaining("canceled")]);
  });

  it("keeps what is typed while an earlier search answers, and a later search's answer wins over an earlier one that arrives last", async () => {
    // the answer to the first search is held until the test releases it
    const first = await hold((url) => url.searchParams.get("q") === "order-1001");
    await page.getByLabel("Payment or external id").fill("order-1001");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(listState).toBe("Loading…");
    await page.getByLabel("Payment or external id").fill(storedCharge); // typed, not yet submitted
    first.release();
    await poll(listState).toBe("1 payment, matching “order-1001”");
    expect(await page.getByLabel("Payment or external id").inputValue()).toBe(storedCharge);

    const late = await hold((url) => url.searchParams.get("q") === "order-1001");
    await search("order-1001", { answered: false });
    await poll(listState).toBe("Loading…");
    await search(storedCharge);
    late.release();
    await late.ended;
    expect(await listState()).toBe(`1 payment, matching “${storedCharge}”`);
    expect(await rows()).toEqual([expect.stringContaining(storedCharge)]);
    await page.unrouteAll({ behavior: "wait" });
  });

  it("opens the payment of the terminal flow: record, timeline, chain verdict, its path highlighted", async () => {
    await search("order-1001");
    await page.getByRole("link", { name: terminalPayment }).click();
    await page.getByRole("heading", { name: `Payment ${terminalPayment}` }).waitFor();
    expect(await page.getByTestId("status").innerText()).toBe("requires_capture");
    const rows = await page.getByTestId("timeline").locator("tbody tr").allInnerTexts();
    expect(rows.map((r) => r.split("\t").slice(0, 2).join(" "))).toEqual(["1 PaymentIntentCreated", "2 TerminalAuthorizationAttempted", "3 TerminalAuthorizationStarted", "4 PaymentAuthorized"]);
    expect(rows[0]).toMatch(/2026-01-01 00:00:00 UTC\t\d+\tkey_\S+\tnone → requires_payment_method/);
    // the attempt before the terminal is asked, then its outcome: the same request, the same moment
    expect(rows[1]).toMatch(/2026-01-01 00:01:00 UTC\t\d+\tkey_\S+\trequires_payment_method → requires_payment_method/);
    expect(rows[2]).toMatch(/2026-01-01 00:01:00 UTC\t\d+\tkey_\S+\trequires_payment_method → payment_method_requested/);
    expect(rows[3]).toMatch(/processor:A\tpayment_method_requested → requires_capture/);
    expect(await page.getByTestId("chain").innerText()).toMatch(/^Intact/);

    // the diagram is the CLI's: the steps this payment took are numbered and drawn in the path colour
    const diagram = page.getByTestId("diagram");
    const svg = await diagram.innerHTML();
    for (const step of ["1. PaymentIntentCreated", "2. TerminalAuthorizationAttempted", "3. TerminalAuthorizationStarted", "4. PaymentAuthorized"]) expect(svg).toContain(step);
    const highlighted = await diagram.locator('g.edge path[stroke="#d9480f"]').count();
    expect(highlighted).toBe(4);
    expect(await diagram.locator('g.node polygon[fill="#ffe8cc"], g.node path[fill="#ffe8cc"]').count()).toBe(4); // none + the 3 statuses reached
  });

  it("shows the state as of an earlier moment", async () => {
    await page.getByLabel("As of (UTC)").fill("2026-01-01T00:00:30");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => page.getByTestId("as-of").innerText()).toMatch(/^At 2026-01-01 00:00:30 UTC the payment was requires_payment_method: authorized 0\.00, captured 0\.00/);
    await page.getByLabel("As of (UTC)").fill("2026-01-01T00:02:00");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => page.getByTestId("as-of").innerText()).toMatch(/was requires_capture: authorized 25\.00/);
    await page.getByLabel("As of (UTC)").fill("2025-12-31T23:00:00");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => page.getByTestId("as-of").innerText()).toMatch(/did not exist yet/);
  });

  it("captures from the page after a confirmation (Escape backs out), and the status changes", async () => {
    await page.getByRole("button", { name: "Capture…" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.innerText()).toContain(`Capture 25.00 USD of payment ${terminalPayment}?`);
    await page.keyboard.press("Escape");
    await poll(() => dialog.count()).toBe(0);
    expect((await m.read(terminalPayment)).body.status).toBe("requires_capture"); // backing out did nothing

    await page.getByRole("button", { name: "Capture…" }).click();
    await page.getByRole("button", { name: "Yes, capture" }).click();
    await poll(() => page.getByTestId("status").innerText()).toBe("succeeded");
    expect(await page.getByRole("status").filter({ hasText: "Captured" }).innerText()).toBe("Captured: the payment is now succeeded.");
    expect((await m.read(terminalPayment)).body).toMatchObject({ status: "succeeded", amount_captured: "25.00" });
    await poll(() => page.getByTestId("timeline").locator("tbody tr").count()).toBe(6); // + CaptureAttempted, PaymentCaptured
    // the README's screenshot, with the state as of the moment before the shopper paid
    await page.getByLabel("As of (UTC)").fill("2026-01-01T00:01:30");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => page.getByTestId("as-of").innerText()).toMatch(/was payment_method_requested/);
    // written beside the test reports; UPDATE_DOCS=1 renews the README's copy (a test run leaves the tree clean)
    await page.screenshot({ path: process.env.UPDATE_DOCS ? "docs/console-payment.png" : ".tmp/console-payment.png", fullPage: true });
  });

  it("a refund above what is refundable is refused, and the console says why in words", async () => {
    await page.getByLabel("Refund amount").fill("999.00");
    await page.getByRole("button", { name: "Refund…" }).click();
    await page.getByRole("button", { name: "Yes, refund" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/^The request was refused\. Amount: 999\.00 exceeds amount_refundable 25\.00\.\s+HTTP 400 · amount_too_large · field amount · request \d+$/);
    expect((await m.read(terminalPayment)).body.amount_refunded).toBe("0.00");
  });

  it("lists the terminals and a customer's cards; reads on a phone without sideways scrolling", async () => {
    await page.getByRole("link", { name: "Terminals" }).click();
    await poll(() => page.getByRole("table").locator("caption").innerText()).toBe("2 terminals");
    expect(await rows()).toEqual([expect.stringMatching(/^tmr_\S+\tA_async\t\t\t2026-01-01 00:00:00 UTC$/), expect.stringMatching(/^tmr_\S+\tA_sync\t/)]);
    await page.getByRole("link", { name: "Customer cards" }).click();
    await page.getByLabel("External customer id").fill("cus_7");
    await page.getByRole("button", { name: "Show cards" }).click();
    await poll(() => page.getByRole("table").locator("caption").innerText()).toBe("1 card on file for cus_7");
    expect(await rows()).toEqual([expect.stringMatching(/^pm_\S+\tvisa •••• 4242/)]);

    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(`${api.base}/console#/payments/${terminalPayment}`);
    await page.getByTestId("timeline").waitFor(); // the record is shown, not only the heading
    await page.getByTestId("diagram").locator("svg").waitFor();
    const wide = await page.evaluate(() => [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 376 && !e.closest(".scroll, .diagram")).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`));
    expect(wide).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  });
});
