// The web console in a real browser: Debian's Chromium driven by playwright-core, against the
// real server (in process, on a port, with a manual clock so the as-of moments are exact). The
// payments come from the spec's flows over the HTTP API. Every wait is on the page's state
// (a caption naming the question its rows answer, a status, an outcome), never on time.
// Screenshots of each page at 1280×800 and 375×812 go to test-artifacts/console/ (README's copy:
// UPDATE_DOCS=1), the bytes of the first load to .tmp/console-first-load.json, and axe-core
// checks every page at both sizes. Webhook deliveries come from a delivery process on the same
// store whose posts the test answers.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createWebhooks } from "../../src/index.js";
import { createOutbound } from "../../src/outbound/client.js";
import { startApi, type Api, type Merchant } from "../http/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = "test-artifacts/console";
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 812 };

let api: Api;
let m: Merchant;
let browser: BrowserContext;
let page: Page;
let terminalPayment: string;
let storedCharge: string;
let asyncTerminal: string;
const hosts = new Set<string>();

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
  asyncTerminal = await m.terminal("A_async");
  terminalPayment = await terminalFlow(asyncTerminal, { amount: "25.00", capture_method: "manual", external_payment_id: "order-1001" });
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
    viewport: WIDE,
    timezoneId: "UTC",
    locale: "en-US",
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("request", (r) => hosts.add(new URL(r.url()).host));
  await mkdir(ARTIFACTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Waits on the page's state, never on time: vitest's default of 1 s is too short for a loaded machine, so the limit is the test's. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 50_000, interval: 50 });
const caption = (testid: string) => page.getByTestId(`${testid}-state`).innerText();
const listState = () => caption("list");
const rows = (testid = "list") => page.getByTestId(testid).locator("tbody tr").allInnerTexts();
/** What a person reads: the text with its line breaks and runs of spaces as single spaces. */
const text = async (locator: ReturnType<Page["locator"]>) => (await locator.innerText()).replace(/\s+/g, " ").trim();
const hash = () => page.evaluate(() => decodeURIComponent(location.hash));
/** Whether the element has the keyboard focus (a dialog closed gives it back to the button that opened it). */
const focused = (locator: ReturnType<Page["locator"]>) => locator.evaluate((e) => e === document.activeElement);

/** Searches the payments and, unless told not to, waits until the list answers that search. */
async function search(q: string, { answered = true } = {}): Promise<void> {
  await page.getByLabel("Search").fill(q);
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

/** axe-core on the page as it stands: its violations, of every impact (none expected). */
async function axeViolations(): Promise<string[]> {
  const source = await readFile("node_modules/axe-core/axe.min.js", "utf8");
  // evaluated through the DevTools protocol: the page's Content-Security-Policy stays in force for its own scripts
  await page.evaluate(source);
  const found = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  return found;
}

/** At both sizes: a screenshot, nothing wider than the screen, and no serious accessibility violation. */
async function checkBothSizes(name: string, ready: () => Promise<unknown>): Promise<void> {
  for (const [size, viewport] of [["1280", WIDE], ["375", PHONE]] as const) {
    await page.setViewportSize(viewport);
    await ready();
    const wide = await page.evaluate((width) => [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > width + 1 && !e.closest(".diagram")).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`), viewport.width);
    expect(wide, `${name} at ${size} px`).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${size} px`).toBeLessThanOrEqual(viewport.width);
    expect(await axeViolations(), `${name} at ${size} px`).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}/${name}-${size}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDE);
}

describe("the web console in Chromium", () => {
  it("refuses a bad API key once, in words, then signs in with the good one; nothing is fetched from elsewhere", async () => {
    await page.goto(`${api.base}/console`);
    expect(await page.getByText("Create a key with").innerText()).toContain("npx cardflow accounts key <account>");
    await page.getByLabel("API key").fill("sk_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/^That API key is not valid\. Check that it was copied whole/);
    expect((await page.getByRole("alert").innerText()).match(/not valid/g)).toHaveLength(1);
    expect(await page.getByLabel("API key").inputValue()).toBe("sk_not_a_key"); // kept, to correct it
    // a character no key has, copied along (the browser would not send it: not "the service does not answer")
    for (const copied of [`${m.key}\u200b`, `\u201c${m.key}\u201d`]) {
      await page.getByLabel("API key").fill(copied);
      await page.getByRole("button", { name: "Sign in" }).click();
      await poll(() => page.getByRole("alert").innerText()).toMatch(/^That API key is not valid\. It holds a character no API key has/);
    }

    await page.getByLabel("API key").fill(m.key);
    await page.keyboard.press("Enter"); // the form works from the keyboard
    await poll(listState).toBe("3 payments");
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(hosts).toEqual(new Set([new URL(api.base).host]));
    const icon = await page.request.get(`${api.base}/favicon.ico`);
    expect([icon.status(), icon.headers()["content-type"], (await icon.body()).subarray(0, 4).toString("hex")]).toEqual([200, "image/x-icon", "00000100"]);

    // the console's first load: the page, its script and stylesheet (gzip), as Chromium received them
    const sizes = await page.evaluate(() =>
      (performance.getEntries() as Array<PerformanceResourceTiming & { encodedBodyLength: number; decodedBodyLength: number }>).filter((e) => e.name.includes("/console")).map((e) => ({ url: e.name, transfer: e.transferSize, body: e.encodedBodyLength, decoded: e.decodedBodyLength })),
    );
    await mkdir(".tmp", { recursive: true });
    await writeFile(".tmp/console-first-load.json", JSON.stringify({ total_transfer_bytes: sizes.reduce((sum, s) => sum + s.transfer, 0), resources: sizes }, null, 1));
    expect(sizes.map((s) => new URL(s.url).pathname).sort()).toEqual(["/console", "/console/console.css", "/console/console.js"]);
  });

  it("sends /console/ (a trailing slash, typed or linked) to the console", async () => {
    const slash = await page.request.get(`${api.base}/console/`, { maxRedirects: 0 });
    expect([slash.status(), slash.headers()["location"]]).toEqual([301, "/console"]);
    const followed = await page.request.get(`${api.base}/console/`);
    expect([new URL(followed.url()).pathname, followed.status(), await followed.text()]).toEqual(["/console", 200, expect.stringContaining('src="/console/console.js"')]);
  });

  it("lists amounts authorized, captured, refunded and net with human statuses; filters live in the URL and Back returns to them", async () => {
    expect(await page.getByTestId("list").locator("thead th").allInnerTexts()).toEqual(["Payment", "Status", "Amount", "Captured", "Refunded", "Net", "Customer", "Created"]);
    const uncaptured = page.getByTestId("list").locator(`tr:has-text("${terminalPayment}") .status`);
    expect([await text(uncaptured), await uncaptured.getAttribute("title")]).toEqual(["Uncaptured (requires_capture)", "machine state: requires_capture"]);
    expect(await page.getByTestId("list").locator(`tr:has-text("${storedCharge}")`).innerText()).toMatch(/Canceled.*\t12\.50 USD\t0\.00 USD\t0\.00 USD\t0\.00 USD\tcus_42/s);

    await page.getByLabel("Status").selectOption("requires_capture");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(listState).toBe("1 payment, status requires_capture");
    expect(await hash()).toBe("#/payments?status=requires_capture");
    expect(await rows()).toEqual([expect.stringContaining(terminalPayment)]);
    await page.getByLabel("Status").selectOption("");
    await search("order-1001");
    expect(await hash()).toBe("#/payments?q=order-1001");
    expect(await rows()).toEqual([expect.stringMatching(/Uncaptured.*\t25\.00 USD\t0\.00 USD\t0\.00 USD\t0\.00 USD/s)]);
    // the start of a reference, of an id: found by its start
    await search("order-10");
    expect(await rows()).toEqual([expect.stringContaining(terminalPayment)]);
    await search(storedCharge.slice(0, -1));
    expect(await rows()).toContainEqual(expect.stringContaining(storedCharge));
    await search(storedCharge);
    expect(await rows()).toEqual([expect.stringContaining("Canceled")]);
    await page.goBack();
    await poll(listState).toMatch(/^\d+ payments?, matching “pi_/);
    await page.goBack();
    await poll(listState).toBe("1 payment, matching “order-10”");
    // Back: the search before, in the list and in the form
    await page.goBack();
    await poll(listState).toBe("1 payment, matching “order-1001”");
    expect(await page.getByLabel("Search").inputValue()).toBe("order-1001");
    await page.goBack();
    await poll(listState).toBe("1 payment, status requires_capture");
    expect(await page.getByLabel("Status").inputValue()).toBe("requires_capture");
    // a shared link opens with its filters
    await page.goto(`${api.base}/console#/payments?q=${storedCharge}`);
    await poll(listState).toBe(`1 payment, matching “${storedCharge}”`);
  });

  it("keeps what is typed while an earlier search answers, and a later search's answer wins over an earlier one that arrives last", async () => {
    const first = await hold((url) => url.searchParams.get("q") === "order-1001");
    await page.getByLabel("Search").fill("order-1001");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(listState).toBe("Loading…");
    await page.getByLabel("Search").fill(storedCharge); // typed, not yet submitted
    first.release();
    await poll(listState).toBe("1 payment, matching “order-1001”");
    expect(await page.getByLabel("Search").inputValue()).toBe(storedCharge);

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

  it("says the service does not answer when it does not, instead of listing no payments", async () => {
    await page.route((url) => url.pathname === "/v2/payments", (route) => route.abort("connectionrefused"));
    await page.getByRole("link", { name: "Clear" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/^The service does not answer\. Nothing could be read\. Check that it is running/);
    expect(await listState()).toBe("Not loaded");
    await page.unrouteAll({ behavior: "wait" });
    await page.getByRole("button", { name: "Filter" }).click(); // the same question again, answered now
    await poll(listState).toBe("3 payments");
    await checkBothSizes("payments", () => poll(listState).toBe("3 payments"));
  });

  it("once the live stream is back after it was lost, a list whose load failed meanwhile loads again by itself", async () => {
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    // the service unreachable: its connections cut, new ones refused
    const unreachable = (url: URL) => url.pathname === "/v2/payments" || url.pathname === "/v2/events/stream";
    await page.route(unreachable, (route) => route.abort("connectionrefused"));
    api.app.server.closeAllConnections();
    await poll(() => page.getByTestId("live").innerText()).toBe("Reconnecting…");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/^The service does not answer\./);
    expect(await listState()).toBe("Not loaded");
    await page.unrouteAll({ behavior: "wait" });
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    await poll(listState).toBe("3 payments"); // no click: before, the error stayed until one
    expect(await page.getByRole("alert").count()).toBe(0);
  });

  it("says that status, capture, terminal and customer filter one at a time (any of them with a search), and sends nothing for two without a search", async () => {
    const filters = ["status", "capture_method", "terminal_id", "external_customer_id"].map((name) => page.locator(`form[role=search] [name=${name}]`));
    expect(await page.locator("#filters-hint").innerText()).toBe("Status, capture, terminal and customer: one at a time, or any of them with a search.");
    for (const field of filters) expect((await field.getAttribute("aria-describedby"))?.split(" ")).toContain("filters-hint");
    const asked: string[] = [];
    const count = (r: { url(): string }) => void (new URL(r.url()).pathname === "/v2/payments" && asked.push(r.url()));
    page.on("request", count);
    await page.getByLabel("Status").selectOption("requires_capture");
    await filters[1]!.selectOption("manual");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(() => page.locator("#filters-problem").innerText()).toBe("Status and capture are both set: filter by one of them at a time, or search as well.");
    page.off("request", count);
    expect([await hash(), await listState(), asked]).toEqual(["#/payments", "3 payments", []]); // nothing sent, nothing changed
    expect((await filters[0]!.getAttribute("aria-describedby"))?.split(" ")).toContain("filters-problem");
    expect(await page.getByLabel("Status").inputValue()).toBe("requires_capture"); // what was chosen stays
    // with a search, the API applies any of them to what it finds
    await page.getByLabel("Search").fill("order-10");
    await page.getByRole("button", { name: "Filter" }).click();
    await poll(listState).toBe("1 payment, status requires_capture, capture manual, matching “order-10”");
    expect(await page.locator("#filters-problem").count()).toBe(0);
    await page.getByRole("link", { name: "Clear" }).click();
    await poll(listState).toBe("3 payments");
    // the same two filters from a shared or edited URL: said, and nothing sent
    page.on("request", count);
    await page.goto(`${api.base}/console#/payments?status=succeeded&capture_method=manual`);
    await poll(() => page.locator("#filters-problem").innerText()).toBe("Status and capture are both set: filter by one of them at a time, or search as well.");
    page.off("request", count);
    expect([await listState(), asked]).toEqual(["Not sent", []]);
    await page.getByRole("link", { name: "Clear" }).click();
    await poll(listState).toBe("3 payments");
  });

  it("opens the payment of the terminal flow: amounts, timeline, chain verdict, the diagram laid out to fit with its path highlighted", async () => {
    await search("order-1001");
    await page.getByRole("link", { name: terminalPayment }).click();
    await page.getByTestId("timeline").waitFor();
    expect(await page.getByTestId("status").innerText()).toBe("requires_capture");
    expect(await page.getByTestId("amounts").innerText()).toMatch(/Authorized\s+25\.00 USD\s+Captured\s+0\.00 USD\s+Refunded\s+0\.00 USD\s+Net\s+0\.00 USD/);
    const timeline = await rows("timeline");
    expect(timeline.map((r) => r.split("\t").slice(0, 2).join(" "))).toEqual(["1 PaymentIntentCreated", "2 TerminalAuthorizationAttempted", "3 TerminalAuthorizationStarted", "4 PaymentAuthorized"]);
    expect(timeline[0]).toMatch(/2026-01-01 00:00:00 UTC\t\d+\tkey_\S+\tnone → requires_payment_method/);
    expect(timeline[3]).toMatch(/processor:A\tpayment_method_requested → requires_capture/);
    expect(timeline[1]).toMatch(/\tattempt att_\w+ on tmr_\w+$/);
    expect(await page.getByTestId("chain").innerText()).toMatch(/^Intact/);

    // compact: one arrow per pair of states, top to bottom, the steps numbered on the path's arrows
    const diagram = page.getByTestId("diagram");
    await diagram.locator("svg").waitFor();
    const svg = await diagram.innerHTML();
    for (const step of ["1. PaymentIntentCreated", "2. TerminalAuthorizationAttempted", "3. TerminalAuthorizationStarted", "4. PaymentAuthorized"]) expect(svg).toContain(step);
    expect(svg).not.toContain("[manualCapture"); // guards are tooltips, not labels
    expect(await diagram.locator('g.edge path[stroke="#d9480f"]').count()).toBe(4); // created, the attempt's self-arrow, started, authorized
    // fitted: the whole drawing inside its frame, at first
    const fits = await page.evaluate(() => {
      const frame = document.querySelector(".diagram")!.getBoundingClientRect();
      const drawing = document.querySelector(".diagram svg")!.getBoundingClientRect();
      return drawing.left >= frame.left - 1 && drawing.right <= frame.right + 1 && drawing.top >= frame.top - 1 && drawing.bottom <= frame.bottom + 1;
    });
    expect(fits).toBe(true);
    const zoom = () => page.getByTestId("zoom").innerText();
    const fitted = await zoom();
    await page.getByRole("button", { name: "Zoom in" }).click();
    await poll(async () => parseInt(await zoom())).toBeGreaterThan(parseInt(fitted));
    await page.getByRole("button", { name: "Fit" }).click();
    await poll(zoom).toBe(fitted);
  });

  it("shows the state as of an earlier moment", async () => {
    await page.getByLabel("As of (UTC)").fill("2026-01-01T00:00:30");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => text(page.getByTestId("as-of"))).toMatch(/^At 2026-01-01 00:00:30 UTC the payment was Incomplete \(requires_payment_method\) ?: authorized 0\.00 USD, captured 0\.00/);
    await page.getByLabel("As of (UTC)").fill("2025-12-31T23:00:00");
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => page.getByTestId("as-of").innerText()).toMatch(/did not exist yet/);
  });

  it("checks amounts by the API's rules before asking, keeps what is typed, and a partial capture says the rest was released", async () => {
    const amount = page.getByLabel("Capture amount (USD)");
    await amount.fill("25.001");
    await page.getByRole("button", { name: "Capture…" }).click();
    await poll(() => page.locator("#capture-problem").innerText()).toBe("USD has 2 decimals; 25.001 has 3.");
    expect(await amount.inputValue()).toBe("25.001");
    await amount.fill("30");
    await page.getByRole("button", { name: "Capture…" }).click();
    await poll(() => page.locator("#capture-problem").innerText()).toBe("At most 25.00 USD can be captured.");
    expect(await page.getByRole("dialog").count()).toBe(0); // nothing asked, nothing sent
    expect((await m.read(terminalPayment)).body.status).toBe("requires_capture");

    await amount.fill("10");
    await page.getByRole("button", { name: "Capture…" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.innerText()).toContain(`Capture 10.00 USD of payment ${terminalPayment}? The rest of the 25.00 USD authorized is released.`);
    await page.keyboard.press("Escape");
    await poll(() => dialog.count()).toBe(0);
    expect((await m.read(terminalPayment)).body.status).toBe("requires_capture"); // backing out did nothing
    expect(await focused(page.getByRole("button", { name: "Capture…" }))).toBe(true); // focus back on the button that asked

    await page.getByRole("button", { name: "Capture…" }).click();
    await page.getByRole("button", { name: "Yes, capture" }).click();
    await poll(() => page.getByTestId("status").innerText()).toBe("succeeded");
    expect(await page.getByTestId("outcome").innerText()).toBe("Captured 10.00 USD: the payment is now succeeded. The other 15.00 USD of the authorization was released to the shopper.");
    expect((await m.read(terminalPayment)).body).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    await poll(() => page.getByTestId("amounts").innerText()).toMatch(/Captured\s+10\.00 USD\s+Refunded\s+0\.00 USD\s+Net\s+10\.00 USD/);

    await page.getByLabel("Refund amount (USD)").fill("12.00");
    await page.getByRole("button", { name: "Refund…" }).click();
    await poll(() => page.locator("#refund-problem").innerText()).toBe("At most 10.00 USD can be refunded.");

    // another payment's page starts afresh: not this one's answer, problem or amounts
    await page.goto(`${api.base}/console#/payments/${storedCharge}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("canceled");
    expect(await page.getByTestId("outcome").count()).toBe(0);
    expect(await page.locator("#refund-problem").count()).toBe(0);
    await page.goto(`${api.base}/console#/payments/${terminalPayment}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("succeeded");
  });

  it("follows what happens elsewhere live: a refund made through the API shows on the page and in the list without a reload", async () => {
    await m.post("/v2/payment/refund", { payment_id: terminalPayment, amount: "4.00" });
    await poll(() => page.getByTestId("amounts").innerText()).toMatch(/Refunded\s+4\.00 USD\s+Net\s+6\.00 USD/);
    expect(await text(page.locator("h2 .status"))).toBe("Partially refunded (succeeded)");
    await poll(() => page.getByLabel("Refund amount (USD)").inputValue()).toBe("6.00"); // the field offers what is refundable now
    await checkBothSizes("payment", () => page.getByTestId("diagram").locator("svg").waitFor());
    await page.screenshot({ path: process.env.UPDATE_DOCS ? "docs/console-payment.png" : `${ARTIFACTS}/console-payment.png`, fullPage: true });

    await page.getByRole("link", { name: "Payments", exact: true }).first().click();
    await poll(listState).toBe("3 payments");
    await m.post("/v2/payment/refund", { payment_id: terminalPayment, amount: "6.00" });
    await poll(() => page.getByTestId("list").locator(`tr:has-text("${terminalPayment}")`).innerText()).toMatch(/Refunded\s+\(succeeded\)\s+25\.00 USD\t10\.00 USD\t10\.00 USD\t0\.00 USD/);
  });

  it("a capture whose answer never came, the service gone after it: the page stays and says the change may or may not have been made", async () => {
    const { payment_id } = (await m.post("/v1/payment/intent", { amount: "6.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
    await m.post("/v1/payment/auth", { payment_id });
    await page.goto(`${api.base}/console#/payments/${payment_id}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_capture");
    // the capture reaches the service and is applied; its answer is lost, and the service answers nothing more
    await page.route((url) => url.pathname === "/v2/payment/capture", async (route) => {
      await route.fetch();
      await route.abort("connectionreset");
    });
    await page.route((url) => url.pathname.startsWith(`/v2/payment/intent/${payment_id}`), (route) => route.abort("connectionrefused"));
    await page.getByRole("button", { name: "Capture…" }).click();
    await page.getByRole("button", { name: "Yes, capture" }).click();
    await poll(() => page.getByRole("alert").allInnerTexts()).toContainEqual(expect.stringMatching(/It may or may not have made the change: look again once the service answers/));
    expect(await page.getByRole("heading", { name: `Payment ${payment_id}` }).count()).toBe(1); // the page was kept: it was replaced by "Nothing could be read"
    expect((await m.read(payment_id)).body.status).toBe("succeeded"); // it was applied
    await page.unrouteAll({ behavior: "wait" });
  });

  it("after a confirmation, gives the focus back to the button that asked, or to the page when that button can no longer take it", async () => {
    const { payment_id } = (await m.post("/v1/payment/intent", { amount: "8.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
    await m.post("/v1/payment/auth", { payment_id });
    await page.goto(`${api.base}/console#/payments/${payment_id}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_capture");
    await page.getByRole("button", { name: "Capture…" }).click();
    await page.getByRole("button", { name: "Yes, capture" }).click();
    await poll(() => page.getByTestId("status").innerText()).toBe("succeeded");
    // captured in full: Capture… is disabled now, so the focus is on the page, not on <body>
    await poll(() => focused(page.locator("main"))).toBe(true);
    await page.getByLabel("Refund amount (USD)").fill("3");
    await page.getByRole("button", { name: "Refund…" }).click();
    await page.getByRole("button", { name: "Yes, refund" }).click();
    await poll(() => page.getByTestId("outcome").innerText()).toMatch(/^Refunded 3\.00 USD/);
    await poll(() => page.getByLabel("Refund amount (USD)").inputValue()).toBe("5.00"); // the page has its new amounts
    expect(await focused(page.getByRole("button", { name: "Refund…" }))).toBe(true); // still refundable: back on the button that asked

    // opened by Enter in the field: Esc gives the focus back to the field (to correct the amount)...
    const refund = page.getByLabel("Refund amount (USD)");
    await refund.fill("2");
    await refund.press("Enter");
    await page.getByRole("dialog").waitFor();
    await page.keyboard.press("Escape");
    await poll(() => page.getByRole("dialog").count()).toBe(0);
    expect(await focused(refund)).toBe(true);
    // ...confirmed by keyboard, to the action's button (still refundable), not to the page
    const confirmByKeyboard = async () => {
      await refund.press("Enter");
      await page.getByRole("dialog").waitFor();
      await page.keyboard.press("Shift+Tab"); // from Back, which has the focus, to Yes, refund
      expect(await focused(page.getByRole("button", { name: "Yes, refund" }))).toBe(true);
      await page.keyboard.press("Enter");
    };
    await confirmByKeyboard();
    await poll(() => page.getByTestId("outcome").innerText()).toMatch(/^Refunded 2\.00 USD/);
    await poll(() => refund.inputValue()).toBe("3.00");
    expect(await focused(page.getByRole("button", { name: "Refund…" }))).toBe(true);
    // the rest refunded: Refund… disabled, the page has the focus, and the field is cleared
    await confirmByKeyboard();
    await poll(() => page.getByTestId("outcome").innerText()).toMatch(/^Refunded 3\.00 USD/);
    await poll(() => refund.isDisabled()).toBe(true);
    await poll(() => focused(page.locator("main"))).toBe(true);
    expect(await refund.inputValue()).toBe("");
  });

  it("closes a confirmation, saying why and sending nothing, when the payment changes elsewhere so that what it asks is no longer allowed", async () => {
    const { payment_id } = (await m.post("/v1/payment/intent", { amount: "8.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
    await m.post("/v1/payment/auth", { payment_id });
    await page.goto(`${api.base}/console#/payments/${payment_id}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_capture");
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    await page.getByRole("button", { name: "Capture…" }).click();
    await page.getByRole("dialog").waitFor();
    expect((await m.post("/v2/payment/capture", { payment_id, amount: "8.00" })).body.status).toBe("succeeded"); // elsewhere
    await poll(() => page.getByRole("dialog").count()).toBe(0);
    expect(await page.getByTestId("not-sent").innerText()).toBe("Not sent: the payment changed meanwhile. It is now succeeded: capture is no longer allowed.");
    await poll(() => focused(page.locator("main"))).toBe(true); // Capture… is disabled: the page, not <body>

    // still allowed, but not for the amount confirmed
    await page.getByLabel("Refund amount (USD)").fill("5");
    await page.getByRole("button", { name: "Refund…" }).click();
    await page.getByRole("dialog").waitFor();
    expect(await page.getByTestId("not-sent").count()).toBe(0); // asking again clears the one before
    await m.post("/v2/payment/refund", { payment_id, amount: "6.00" });
    await poll(() => page.getByRole("dialog").count()).toBe(0);
    expect(await page.getByTestId("not-sent").innerText()).toBe("Not sent: the payment changed meanwhile. At most 2.00 USD can be refunded.");
    expect((await m.read(payment_id)).body).toMatchObject({ amount_captured: "8.00", amount_refunded: "6.00" });
  });

  it("keeps an amount typed, and its problem checked again, through a live refresh; the fields not typed into follow the new amounts", async () => {
    const { payment_id } = (await m.post("/v1/payment/intent", { amount: "8.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
    await m.post("/v1/payment/auth", { payment_id });
    await page.goto(`${api.base}/console#/payments/${payment_id}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_capture");
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    const capture = page.getByLabel("Capture amount (USD)");
    const refund = page.getByLabel("Refund amount (USD)");
    await capture.fill("3"); // typed, then captured in full elsewhere: no longer allowed, the field follows
    expect((await m.post("/v2/payment/capture", { payment_id, amount: "8.00" })).body.status).toBe("succeeded");
    await poll(() => refund.inputValue()).toBe("8.00"); // not typed into: the amount refundable now
    expect(await capture.isDisabled()).toBe(true);
    expect(await capture.inputValue()).toBe(""); // no longer allowed: disabled and cleared, not "0.00"

    // a probe: the refresh put back the whole refundable amount and cleared the problem, so Refund… offered a full refund
    await refund.fill("100.00");
    await page.getByRole("button", { name: "Refund…" }).click();
    await poll(() => page.locator("#refund-problem").innerText()).toBe("At most 8.00 USD can be refunded.");
    await m.post("/v2/payment/refund", { payment_id, amount: "0.05" }); // elsewhere
    await poll(() => page.getByTestId("amounts").innerText()).toMatch(/Refunded\s+0\.05 USD/);
    await poll(() => page.locator("#refund-problem").innerText()).toBe("At most 7.95 USD can be refunded.");
    expect(await refund.inputValue()).toBe("100.00");
    await refund.fill("1.00");
    await m.post("/v2/payment/refund", { payment_id, amount: "0.05" });
    await poll(() => page.getByTestId("amounts").innerText()).toMatch(/Refunded\s+0\.10 USD/);
    await poll(() => page.locator("#refund-problem").count()).toBe(0); // 1.00 is right for the new amounts
    expect(await refund.inputValue()).toBe("1.00");
    await page.getByRole("button", { name: "Refund…" }).click();
    expect(await page.getByRole("dialog").innerText()).toContain(`Refund 1.00 USD of payment ${payment_id}?`);
    await page.getByRole("button", { name: "Yes, refund" }).click();
    await poll(() => page.getByTestId("outcome").innerText()).toMatch(/^Refunded 1\.00 USD/);
    await poll(() => refund.inputValue()).toBe("6.90"); // done with: the field offers what is left
  });

  it("shows a decline without a failure code as its message alone", async () => {
    const { payment_id } = (await m.post("/v1/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_declined", external_customer_id: "cus_42" })).body;
    await m.post("/v1/payment/auth", { payment_id });
    expect((await m.read(payment_id)).body).toMatchObject({ status: "error", last_error: "Your card was declined" });
    expect((await m.read(payment_id)).body.last_error_code).toBeUndefined();
    await page.goto(`${api.base}/console#/payments/${payment_id}`);
    await poll(() => page.getByTestId("status").innerText()).toBe("error");
    expect(await page.locator("dt:text-is('Last error') + dd").innerText()).toBe("Your card was declined");
  });

  it("offers, as the moment for the state as of, one at which the payment exists (its latest event's, to the second above)", async () => {
    await api.clock.advance(500); // created half-way through a second: cut to the second, the moment would be before it
    const { payment_id } = (await m.post("/v2/payment/intent", { amount: "2.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_42" })).body;
    await api.clock.advance(500); // back on whole seconds for the tests after
    const { date_created } = (await m.read(payment_id)).body;
    expect(Date.parse(date_created) % 1000).toBe(500);
    const above = new Date(Math.ceil(Date.parse(date_created) / 1000) * 1000).toISOString().slice(0, 19);
    await page.goto(`${api.base}/console#/payments/${payment_id}`); // from another payment's page
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_payment_method");
    await poll(() => page.getByLabel("As of (UTC)").inputValue()).toBe(above);
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => text(page.getByTestId("as-of"))).toMatch(new RegExp(`^At ${above.replace("T", " ")} UTC the payment was Incomplete \\(requires_payment_method\\) ?: authorized 0\\.00 USD`));

    // the payment changes (live, from elsewhere): the moment offered follows its latest event, so Show still answers its state now
    await api.clock.advance(60_000);
    const authorized = new Date(api.clock.now()).toISOString().slice(0, 19);
    expect((await m.post("/v2/payment/auth", { payment_id })).body.status).toBe("requires_capture");
    await poll(() => page.getByTestId("status").innerText()).toBe("requires_capture");
    await poll(() => page.getByLabel("As of (UTC)").inputValue()).toBe(authorized);
    await page.getByRole("button", { name: "Show" }).click();
    await poll(() => text(page.getByTestId("as-of"))).toMatch(new RegExp(`^At ${authorized.replace("T", " ")} UTC the payment was Uncaptured \\(requires_capture\\) ?: authorized 2\\.00 USD`));
    // a moment typed is kept through the next change
    await page.getByLabel("As of (UTC)").fill(above);
    await api.clock.advance(60_000);
    expect((await m.post("/v2/payment/capture", { payment_id, amount: "2.00" })).body.status).toBe("succeeded");
    await poll(() => page.getByTestId("status").innerText()).toBe("succeeded");
    expect(await page.getByLabel("As of (UTC)").inputValue()).toBe(above);
  });

  it("registers a terminal; in the sandbox a test card is presented, and a refusal comes back in words", async () => {
    await page.getByRole("link", { name: "Terminals" }).click();
    await poll(() => caption("terminals")).toBe("2 terminals");
    await page.getByLabel("Type").selectOption("A_async");
    await page.getByLabel("Label").fill("front desk");
    await page.getByRole("button", { name: "Register" }).click();
    await poll(() => caption("terminals")).toBe("3 terminals");
    expect(await page.getByRole("status").filter({ hasText: "Registered" }).innerText()).toMatch(/^Registered tmr_\S+ \(A_async\)\.$/);
    // the terminal of the first payment waits for no card now: the simulator says so
    await page.getByRole("combobox", { name: /^Terminal/ }).selectOption(asyncTerminal);
    await page.getByRole("button", { name: "Present card" }).click();
    await poll(() => page.getByRole("alert").innerText()).toMatch(/^(Not allowed now|Not found|The request was refused)\. .+\s+HTTP 4\d\d · /);
    // an intent waiting on the new terminal: the card presented from the page authorizes it
    const terminal = (await m.get("/v2/hardware?external_account_id=acct_console")).body.data.find((t: { label: string | null }) => t.label === "front desk").terminal_id as string;
    const { payment_id } = (await m.post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card_present", capture_method: "manual" })).body;
    await m.post("/v2/payment/auth", { payment_id, terminal_id: terminal });
    await page.getByRole("combobox", { name: /^Terminal/ }).selectOption(terminal);
    await page.getByRole("button", { name: "Present card" }).click();
    await poll(() => page.getByRole("status").filter({ hasText: "presented" }).innerText()).toBe(`The card was presented: payment ${payment_id} is now requires_capture.`);
    await checkBothSizes("terminals", () => poll(() => caption("terminals")).toBe("3 terminals"));
  });

  it("shows a customer's cards (the customer in the URL) and saves a captured payment's card", async () => {
    await page.goto(`${api.base}/console#/cards?customer=cus_7`);
    await poll(() => caption("cards")).toBe("1 card on file for cus_7");
    expect(await rows("cards")).toEqual([expect.stringMatching(/^pm_\S+\tvisa •••• 4242/)]);
    await page.getByLabel("Payment", { exact: true }).fill(terminalPayment);
    await page.getByLabel("Customer", { exact: true }).fill("cus_7");
    await page.getByRole("button", { name: "Save card" }).click();
    // an asynchronous terminal's payment: refused (by /v1, the only route that saves cards), said in /v2's words like every status in the console
    await poll(() => text(page.getByRole("alert"))).toMatch(/^Not allowed now\. Payment \S+ in status succeeded does not allow save_card \(the asynchronous terminal type does not support card on file\); allowed next steps: [a-z_, ]+\. HTTP 409 · payment_intent_unexpected_state/);
    expect(await text(page.getByRole("alert"))).not.toMatch(/\bsuccess\b/);
    expect((await text(page.getByRole("alert"))).match(/allowed next/g)).toHaveLength(1); // said once: the API's detail says them
    await checkBothSizes("cards", () => poll(() => caption("cards")).toMatch(/card/));
    // the service not answering: said, and no count of cards it could not read
    await page.route((url) => url.pathname === "/v1/customer/card", (route) => route.abort("connectionrefused"));
    await page.goto(`${api.base}/console#/cards?customer=cus_42`);
    await poll(() => page.getByRole("alert").filter({ hasText: "The service does not answer" }).count()).toBe(1);
    expect(await caption("cards")).toBe("Not loaded");
    await page.unrouteAll({ behavior: "wait" });
  });

  it("keeps the cards search and the save form's customer on the customer shown (Back included); the save form's customer stays editable", async () => {
    await page.goto(`${api.base}/console#/cards?customer=cus_7`);
    await poll(() => caption("cards")).toBe("1 card on file for cus_7");
    const shown = page.getByLabel("Customer (your id)");
    const saving = page.getByLabel("Customer", { exact: true });
    const payment = page.getByLabel("Payment", { exact: true });
    await poll(() => shown.inputValue()).toBe("cus_7");
    await payment.fill(storedCharge);
    await saving.fill("cus_9"); // typed into the save form: the search is not changed
    expect(await shown.inputValue()).toBe("cus_7");
    await shown.fill("cus_42");
    await page.getByRole("button", { name: "Show cards" }).click();
    await poll(() => caption("cards")).toBe("0 cards on file for cus_42");
    // another customer shown: Save card saves for them, not for one left behind; the payment typed stays
    await poll(() => saving.inputValue()).toBe("cus_42");
    expect(await payment.inputValue()).toBe(storedCharge);
    await page.goBack(); // the URL's customer, in the table, the search field and the save form
    await poll(() => caption("cards")).toBe("1 card on file for cus_7");
    await poll(() => saving.inputValue()).toBe("cus_7");
    expect([await hash(), await shown.inputValue(), await payment.inputValue()]).toEqual(["#/cards?customer=cus_7", "cus_7", storedCharge]);
  });

  it("adds a webhook endpoint (its secret shown once), lists it, deletes it after a confirmation", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    await poll(() => caption("endpoints")).toBe("0 endpoints");
    await page.getByLabel("URL").fill("https://hooks.example.com/cardflow");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await poll(() => caption("endpoints")).toBe("1 endpoint");
    expect(await page.getByTestId("secret").innerText()).toMatch(/^Created we_\S+\. Its signing secret, shown only now: \S+$/);
    await checkBothSizes("webhooks", () => poll(() => caption("endpoints")).toBe("1 endpoint"));
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("button", { name: "Back" }).click(); // backed out: focus back on the button that asked
    await poll(() => page.getByRole("dialog").count()).toBe(0);
    expect(await focused(page.getByRole("button", { name: "Delete…" }))).toBe(true);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await poll(() => caption("endpoints")).toBe("0 endpoints");
    await poll(() => focused(page.locator("main"))).toBe(true); // its row and button gone: the focus on the page, not on <body>
  });

  it("lists an endpoint's deliveries (event, status, attempts, last answer, next retry) and retries one after a confirmation", async () => {
    // a delivery process on the same store, posting to a receiver that answers 503 until retried
    let answer = 503;
    const posted: string[] = [];
    const webhooks = createWebhooks({ engine: api.engine, outbound: createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] }), post: async (_url, body) => (posted.push(body), { status: answer, error: null }) });
    const endpoint = await webhooks.createEndpoint({ external_account_id: "acct_console", url: "http://127.0.0.1:9/hooks", event_types: ["payment_intent.created"] });
    await webhooks.delivery.start();
    try {
      await m.post("/v2/payment/intent", { amount: "4.00", payment_method_types: "card", capture_method: "manual" });
      await poll(async () => ((await webhooks.listDeliveries({ external_account_id: "acct_console", endpoint_id: endpoint.id })).data).length).toBe(1);
      await page.getByRole("link", { name: "Events" }).click(); // away, so the endpoints page loads again
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("link", { name: endpoint.id }).click();
      await poll(() => caption("deliveries")).toBe("1 delivery");
      expect(await rows("deliveries")).toEqual([expect.stringMatching(/^payment_intent\.created\nevt_\S+\tRetrying\t1, last .+\tHTTP 503\t.+ UTC\tRetry…$/)]);
      await checkBothSizes("deliveries", () => poll(() => caption("deliveries")).toBe("1 delivery"));

      answer = 200;
      await page.getByRole("button", { name: "Retry…" }).click();
      expect(await page.getByRole("dialog").innerText()).toContain("Post event evt_");
      await page.getByRole("button", { name: "Yes, retry" }).click();
      await poll(() => page.getByRole("status").filter({ hasText: "Retry asked" }).innerText()).toMatch(/^Retry asked for evt_\S+: it is posted again now\.$/);
      // another endpoint's deliveries: the notice was about the first one, it does not follow
      const other = await webhooks.createEndpoint({ external_account_id: "acct_console", url: "http://127.0.0.1:9/other", event_types: ["payment_intent.canceled"] });
      try {
        await page.evaluate((id) => (location.hash = `#/webhooks/${id}`), other.id);
        await poll(() => caption("deliveries")).toBe("0 deliveries");
        expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(`Deliveries to ${other.id}`);
        expect(await page.getByText("Retry asked").count()).toBe(0);
      } finally {
        await webhooks.deleteEndpoint({ external_account_id: "acct_console", endpoint_id: other.id });
      }
      await page.goBack();
      await poll(() => caption("deliveries")).toBe("1 delivery");
      expect(await page.getByRole("navigation", { name: "Pages" }).getByRole("link").count()).toBe(0);
      // the delivering process takes the retry on its next turn (its clock is the test's)
      await poll(async () => (await api.clock.advance(10_000), ((await webhooks.listDeliveries({ external_account_id: "acct_console", endpoint_id: endpoint.id })).data)[0]!.delivered)).toBe(true);
      await page.reload();
      await poll(() => rows("deliveries")).toEqual([expect.stringMatching(/^payment_intent\.created\nevt_\S+\tDelivered\t2, last .+\tHTTP 200\t—\t$/)]);
      expect(posted).toHaveLength(2);
    } finally {
      await webhooks.delivery.stop();
      await webhooks.deleteEndpoint({ external_account_id: "acct_console", endpoint_id: endpoint.id });
    }
  });

  it("pages the event feed, its filters in the URL, and shows events arriving live", async () => {
    await page.goto(`${api.base}/console#/events?payment_id=${terminalPayment}`);
    await poll(() => caption("events")).toMatch(/^\d+ events, oldest first$/);
    const types = (await rows("events")).map((r) => r.split("\t")[1]);
    expect(types.slice(0, 3)).toEqual(["payment_intent.created", "payment_intent.payment_method_requested", "payment_intent.requires_capture"]);
    expect(types).toContain("payment_intent.refunded");
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    const { payment_id } = (await m.post("/v2/payment/intent", { amount: "3.00", payment_method_types: "card", capture_method: "manual" })).body;
    await page.goto(`${api.base}/console#/events?type=payment_intent.canceled`);
    await poll(() => caption("events")).toBe("1 event, oldest first");
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    await m.post("/v2/payment/cancel", { payment_id });
    await poll(() => rows("arrived")).toEqual([expect.stringMatching(new RegExp(`\\tpayment_intent\\.canceled\\t${payment_id}\\t#2\\t`))]);
    await checkBothSizes("events", () => poll(() => caption("events")).toBe("1 event, oldest first"));
  });

  it("pages an endpoint's deliveries newest first, 20 at a time, back to the oldest", async () => {
    const webhooks = createWebhooks({ engine: api.engine, outbound: createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] }), post: async () => ({ status: 200, error: null }) });
    const endpoint = await webhooks.createEndpoint({ external_account_id: "acct_console", url: "http://127.0.0.1:9/paged", event_types: ["payment_intent.canceled"] });
    await webhooks.delivery.start();
    try {
      const canceled: string[] = [];
      for (let i = 0; i < 23; i++) {
        const { payment_id } = (await m.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "manual" })).body;
        expect((await m.post("/v2/payment/cancel", { payment_id })).status).toBe(200);
        canceled.push(payment_id);
      }
      await poll(async () => ((await webhooks.listDeliveries({ external_account_id: "acct_console", endpoint_id: endpoint.id, limit: 100 })).data.length)).toBe(23);
      // each row links its event to the payment it is about
      const shown = () => page.getByTestId("deliveries").locator("a[title^='Payment ']").evaluateAll((links) => links.map((a) => a.getAttribute("title")!.slice("Payment ".length)));
      await page.evaluate((id) => (location.hash = `#/webhooks/${id}`), endpoint.id);
      await poll(() => caption("deliveries")).toBe("20 deliveries");
      expect(await shown()).toEqual(canceled.slice(3).reverse());
      const pager = page.getByRole("navigation", { name: "Pages" });
      expect(await pager.getByRole("link").allInnerTexts()).toEqual(["Older deliveries"]);
      await pager.getByRole("link", { name: "Older deliveries" }).click();
      await poll(() => caption("deliveries")).toMatch(/^3 deliveries, older than evt_\S+$/);
      expect(await shown()).toEqual(canceled.slice(0, 3).reverse());
      expect(await pager.getByRole("link").allInnerTexts()).toEqual(["Newest"]);
      await pager.getByRole("link", { name: "Newest" }).click();
      await poll(() => caption("deliveries")).toBe("20 deliveries");
    } finally {
      await webhooks.delivery.stop();
      await webhooks.deleteEndpoint({ external_account_id: "acct_console", endpoint_id: endpoint.id });
    }
  });

  it("says an address it cannot read (a malformed %-escape) is not valid, and navigation goes on working", async () => {
    const errors: string[] = [];
    const onError = (error: Error) => void errors.push(error.message);
    page.on("pageerror", onError);
    try {
      await page.goto(`${api.base}/console#/payments/100%off`); // a probe: "URIError: URI malformed", the console blank until a reload
      await poll(() => page.getByRole("heading", { level: 1 }).innerText()).toBe("Not a valid address");
      await poll(() => focused(page.locator("main"))).toBe(true);
      await page.getByRole("link", { name: "Go to the payments" }).click();
      await poll(listState).toMatch(/^\d+ payments/);
      await page.evaluate(() => (location.hash = "#/webhooks/%E0%A4%A"));
      await poll(() => page.getByRole("heading", { level: 1 }).innerText()).toBe("Not a valid address");
      await page.getByRole("link", { name: "Events" }).click();
      await poll(() => caption("events")).toMatch(/^\d+ events, oldest first$/);
      expect(errors).toEqual([]);
    } finally {
      page.off("pageerror", onError);
    }
  });

  it("lists the account's API keys (never a key), revokes one after a confirmation; revoking this tab's key signs it out", async () => {
    const other = await createApiKeys(api.engine).issue("acct_console", "test");
    await page.getByRole("link", { name: "API keys" }).click();
    await poll(() => caption("keys")).toBe("2 keys");
    const listed = await rows("keys");
    expect(listed.join("\n")).not.toContain(m.key);
    expect(listed.join("\n")).not.toContain(other.key);
    expect(listed.filter((r) => r.includes("(this tab)"))).toHaveLength(1);
    await checkBothSizes("keys", () => poll(() => caption("keys")).toBe("2 keys"));

    const otherRow = page.getByTestId("keys").locator("tbody tr").filter({ hasNotText: "(this tab)" });
    await otherRow.getByRole("button", { name: "Revoke…" }).click();
    await page.keyboard.press("Escape"); // backed out: focus back on the button that asked
    await poll(() => page.getByRole("dialog").count()).toBe(0);
    expect(await focused(otherRow.getByRole("button", { name: "Revoke…" }))).toBe(true);
    await otherRow.getByRole("button", { name: "Revoke…" }).click();
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await poll(() => otherRow.innerText()).toMatch(/\trevoked\t/);
    await poll(() => focused(page.locator("main"))).toBe(true); // its Revoke… gone: the focus on the page, not on <body>
    expect((await api.request("GET", "/v2/account", { key: other.key })).status).toBe(401);

    await page.getByTestId("keys").locator("tbody tr").filter({ hasText: "(this tab)" }).getByRole("button", { name: "Revoke…" }).click();
    expect(await page.getByRole("dialog").innerText()).toContain("you will be signed out");
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await page.getByLabel("API key").waitFor(); // back to sign-in
    await poll(() => focused(page.getByLabel("API key"))).toBe(true); // a probe: left on <body>
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("a tab whose key is revoked elsewhere is signed out by its live stream, without a click", async () => {
    const doomed = await createApiKeys(api.engine).issue("acct_console", "test");
    const tab = await browser.newPage(); // its own sessionStorage: not signed in
    try {
      await tab.goto(`${api.base}/console`);
      await tab.getByLabel("API key").fill(doomed.key);
      await tab.getByRole("button", { name: "Sign in" }).click();
      await poll(() => tab.getByTestId("live").innerText()).toBe("Live");
      await createApiKeys(api.engine).revoke(doomed.key_id, { account: "acct_console", actor: "test" }); // from another tab, or the CLI
      await api.clock.advance(1_000); // past the keys' cache
      await tab.getByLabel("API key").waitFor(); // back to sign-in: the stream ended, its reconnection answered 401
      expect(await tab.evaluate(() => sessionStorage.length)).toBe(0);
      // and it says why (a probe: the tab went back to sign-in without a word)
      expect(await tab.getByTestId("signed-out").innerText()).toContain("the API key this tab used is no longer valid");
      // signing in clears it; signing out on purpose says nothing of the kind
      const fresh = await createApiKeys(api.engine).issue("acct_console", "test");
      await tab.getByLabel("API key").fill(fresh.key);
      await tab.getByRole("button", { name: "Sign in" }).click();
      await tab.getByRole("button", { name: "Sign out" }).click();
      await tab.getByLabel("API key").waitFor();
      await poll(() => tab.getByLabel("API key").evaluate((e) => e === document.activeElement)).toBe(true); // not <body>
      expect(await tab.getByTestId("signed-out").count()).toBe(0);
    } finally {
      await tab.close();
    }
  });

  it("after a reload, keeps the key through an error answer (a proxy's 502), saying it, and signs out saying why only when the key is refused", async () => {
    const key = await createApiKeys(api.engine).issue("acct_console", "test");
    const tab = await browser.newPage(); // its own sessionStorage
    try {
      await tab.goto(`${api.base}/console`);
      await tab.getByLabel("API key").fill(key.key);
      await tab.getByRole("button", { name: "Sign in" }).click();
      await poll(() => tab.getByTestId("live").innerText()).toBe("Live");
      // a probe: any error answer on reload threw the key away
      let asked = 0;
      await tab.route((url) => url.pathname === "/v2/account", (route) => (asked++, route.fulfill({ status: 502, contentType: "text/html", body: "<html>Bad Gateway</html>" })));
      await tab.reload();
      await poll(() => tab.getByRole("alert").innerText()).toMatch(/^The service failed\. 502 Bad Gateway: a page from something between the client and the API \(a proxy\?\), not the API's answer\.\s+HTTP 502/s);
      expect(await tab.evaluate(() => sessionStorage.length)).toBe(1);
      await tab.getByRole("button", { name: "Try again" }).click();
      await poll(() => asked).toBe(2);
      // answered again: the page says so again, its Try again (removed while loading) has the focus, not <body>
      await poll(() => tab.getByRole("button", { name: "Try again" }).evaluate((e) => e === document.activeElement)).toBe(true);
      await tab.unrouteAll({ behavior: "wait" });
      // while it loads again (the answer held here), its status has the focus, not <body>
      let answer = () => {};
      const held = new Promise<void>((resolve) => (answer = resolve));
      await tab.route((url) => url.pathname === "/v2/account", async (route) => (await held, route.continue()));
      await tab.getByRole("button", { name: "Try again" }).click();
      await poll(() => tab.getByRole("status").filter({ hasText: "Loading…" }).evaluate((e) => e === document.activeElement)).toBe(true);
      answer();
      await poll(() => tab.getByTestId("live").innerText()).toBe("Live");
      await tab.unrouteAll({ behavior: "wait" });

      // revoked while the tab had no stream connected (it was elsewhere): the reload's 401 says why
      await tab.goto("about:blank");
      await createApiKeys(api.engine).revoke(key.key_id, { account: "acct_console", actor: "test" });
      await api.clock.advance(1_000); // past the keys' cache
      await tab.goto(`${api.base}/console`);
      await poll(() => tab.getByTestId("signed-out").count()).toBe(1); // a probe: signed out without a word
      expect(await tab.getByTestId("signed-out").innerText()).toContain("the API key this tab used is no longer valid");
      expect(await tab.evaluate(() => sessionStorage.length)).toBe(0);
    } finally {
      await tab.close();
    }
  });

  // last: the payments it adds would change the lists the tests above read
  it("says when more payments follow on the next page, and pages to them, by keyboard too (the focus stays on Next page)", async () => {
    for (let i = 0; i < 40; i++) await api.engine.createIntent({ external_account_id: "acct_console", amount: "1.00", payment_method_types: "card", capture_method: "manual" });
    // a new key: a test above revoked the one this page signed in with
    const { key } = await createApiKeys(api.engine).issue("acct_console", "test");
    const all = await api.request("GET", "/v2/payments?external_account_id=acct_console&limit=100", { key });
    const total = all.body.data.length as number;
    expect(total).toBeGreaterThan(20);
    await page.goto(`${api.base}/console#/payments`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await poll(listState).toBe("20 payments; more on the next page");
    await page.getByRole("link", { name: "Next page" }).focus();
    await page.keyboard.press("Enter");
    await poll(listState).toBe("20 payments, a later page; more on the next page");
    // the same link still has the focus (it was reused as "Newest", and a second Enter went back to the start)
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Next page");
    await page.keyboard.press("Enter");
    const third = Math.min(20, total - 40);
    await poll(listState).toBe(`${third} payment${third === 1 ? "" : "s"}, a later page${total > 60 ? "; more on the next page" : ""}`);
  });

  it("at 1280 px, a list with a long reference and customer keeps its amounts on one line each; a customer id in another script direction is isolated", async () => {
    const { key } = await createApiKeys(api.engine).issue("acct_console", "test");
    const m2 = { post: (path: string, body: object) => api.request("POST", path, { key, body: { external_account_id: "acct_console", ...body } }) };
    const customer = `cust_${"y".repeat(190)}`;
    await m2.post("/v2/payment/intent", { amount: "34.00", payment_method_types: "card", capture_method: "manual", external_customer_id: customer, external_payment_id: `REF${"x".repeat(190)}` });
    const rtl = "مرحبا\u202eevil";
    await m2.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "manual", external_customer_id: rtl });
    await page.goto(`${api.base}/console#/payments`);
    await poll(listState).toMatch(/^20 payments/);
    const lines = await page.getByTestId("list").locator(".amount").evaluateAll((cells) => cells.map((c) => c.getClientRects().length));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((n) => n === 1)).toBe(true);
    await page.goto(`${api.base}/console#/payments?external_customer_id=${encodeURIComponent(rtl)}`);
    await poll(listState).toBe(`1 payment, customer ${rtl}`);
    expect(await page.getByTestId("list-state").locator("bdi").innerText()).toBe(rtl);
  });

  it("at 375 px, ids and references as long as the API takes them wrap: nothing scrolls sideways", async () => {
    const { key } = await createApiKeys(api.engine).issue("acct_console", "test");
    await page.goto(`${api.base}/console#/payments`);
    await page.evaluate(() => sessionStorage.clear());
    await page.reload();
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await poll(() => page.getByTestId("live").innerText()).toBe("Live");
    await page.setViewportSize(PHONE);
    try {
      for (const address of [`#/cards?customer=cust_${"y".repeat(150)}`, `#/payments?external_customer_id=cust_${"y".repeat(150)}`, `#/payments?q=LONGREF${"x".repeat(100)}`, `#/payments?terminal_id=tmr_${"t".repeat(200)}`, `#/webhooks/we_${"w".repeat(200)}`]) {
        await page.goto(`${api.base}/console${address}`);
        await poll(() => page.locator("main").innerText()).toMatch(/y{20}|x{20}|t{20}|w{20}/);
        expect(await page.evaluate(() => document.documentElement.scrollWidth), address).toBeLessThanOrEqual(PHONE.width);
      }
    } finally {
      await page.setViewportSize(WIDE);
    }
  });
});
