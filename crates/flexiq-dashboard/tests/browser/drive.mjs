// Drives the dashboard in the machine's Chromium (headless, over CDP via playwright-core) the
// way an operator would, and writes a screenshot of every page it checks.
//
// Inputs (environment): DASH_URL, DASH_PASSWORD, DASH_CHROMIUM, DASH_SHOTS, DASH_CHILD_JOB,
// DASH_BULK_QUEUE, DASH_BULK_JOBS, DASH_HOOK_NAME, DASH_HOOK_URL, DASH_HOOK_SECRET. The live-count step hands over to the test: this script
// prints "LIVE_READY" and waits for a "GO" line on stdin once the test has enqueued jobs.
// Any failed check throws, and the process exits 1 with the reason on stderr.
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const base = env("DASH_URL");
const shots = env("DASH_SHOTS");
const bulkQueue = env("DASH_BULK_QUEUE");
const bulkJobs = Number(env("DASH_BULK_JOBS"));
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const check = (ok, what) => { if (!ok) throw new Error(`check failed: ${what}`); };
const step = (name) => console.log(`STEP ${name}`);

const browser = await chromium.launch({
  executablePath: env("DASH_CHROMIUM"),
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("dialog", (d) => d.accept());
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  step("login");
  await page.goto(`${base}/`);
  check(page.url().endsWith("/login"), `an anonymous visit lands on /login, not ${page.url()}`);
  await shot("login");
  await page.fill("#password", "wrong password");
  await page.click("button[type=submit]");
  await page.waitForSelector("#flash.bad");
  await page.fill("#password", env("DASH_PASSWORD"));
  await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
  await page.waitForSelector("[data-count='*:pending']");
  await shot("overview");

  step("live count");
  const cell = "[data-count='*:pending']";
  const before = Number(await page.textContent(cell));
  await page.evaluate(() => { window.__notReloaded = true; });
  console.log("LIVE_READY");
  const go = await lines.next();
  check(go.value === "GO", `the test answers GO, not ${go.value}`);
  await page.waitForFunction(
    ([sel, want]) => Number(document.querySelector(sel).textContent) === want,
    [cell, before + 3], { timeout: 30000 });
  check(await page.evaluate(() => window.__notReloaded === true), "the count changed without a reload");
  await shot("overview-live");

  step("pause and resume");
  await page.goto(`${base}/queues`);
  const row = `tr[data-queue='${bulkQueue}']`;
  check(await page.isVisible(`${row} [data-paused='false']`), "the bulk queue starts active");
  await Promise.all([page.waitForNavigation(), page.click(`${row} button:has-text('Pause')`)]);
  await page.waitForSelector(`${row} [data-paused='true']`);
  await shot("queues-paused");
  const paused = await page.evaluate(async (q) => (await (await fetch(`/api/v1/queues/${q}`)).json()).controls.paused, bulkQueue);
  check(paused === true, "the store says the queue is paused");
  await Promise.all([page.waitForNavigation(), page.click(`${row} button:has-text('Resume')`)]);
  await page.waitForSelector(`${row} [data-paused='false']`);

  step("retry a dead letter");
  await page.goto(`${base}/dead-letters`);
  const deadRows = await page.$$("tr[data-dead]");
  check(deadRows.length === 1, `one dead letter listed, not ${deadRows.length}`);
  await shot("dead-letters");
  await Promise.all([page.waitForNavigation(), page.click("tr[data-dead] button:has-text('Retry')")]);
  await page.waitForSelector("#flash.ok");
  check((await page.$$("tr[data-dead]")).length === 0, "the retried dead letter is gone");

  step("page through jobs");
  await page.goto(`${base}/jobs?queue=${bulkQueue}&status=pending&limit=500`);
  await shot("jobs");
  const seen = new Set();
  let pages = 0;
  for (;;) {
    pages += 1;
    const ids = await page.$$eval("tr[data-job]", (rows) => rows.map((r) => r.dataset.job));
    const queues = await page.$$eval("tr[data-job] td:nth-child(2)", (cells) => cells.map((c) => c.textContent));
    check(queues.every((q) => q === bulkQueue), "the filter holds on every page");
    ids.forEach((id) => seen.add(id));
    const next = await page.$("#next-page");
    if (!next) break;
    await Promise.all([page.waitForNavigation(), next.click()]);
    check(pages < 100, "paging ends");
  }
  check(seen.size === bulkJobs, `${bulkJobs} distinct jobs paged, saw ${seen.size} in ${pages} pages`);

  step("job dependency graph");
  const child = env("DASH_CHILD_JOB");
  await page.goto(`${base}/jobs/${child}`);
  await page.waitForSelector("svg#dag");
  const nodes = await page.$$eval("svg#dag g.node", (n) => n.map((g) => g.dataset.job));
  const edges = await page.$$("svg#dag line.edge");
  check(nodes.includes(child) && nodes.length === 2 && edges.length === 1, `the graph shows parent and child: ${nodes}`);
  await shot("job-dag");
  const parent = nodes.find((n) => n !== child);
  await Promise.all([page.waitForURL(`${base}/jobs/${parent}`), page.click(`svg#dag g.node[data-job='${parent}']`)]);

  step("create a webhook");
  const hook = env("DASH_HOOK_NAME");
  await page.goto(`${base}/webhooks`);
  const form = "form[data-webhook-form='create']";
  await page.fill(`${form} [name=name]`, hook);
  await page.fill(`${form} [name=url]`, env("DASH_HOOK_URL"));
  await page.fill(`${form} [name=events]`, "completed, dead");
  await page.fill(`${form} [name=secret]`, env("DASH_HOOK_SECRET"));
  // A loopback target without allow_private: refused on the page, the form kept as typed.
  await page.click(`${form} button[type=submit]`);
  await page.waitForSelector(`${form} output.form-error:not(:empty)`);
  const refused = await page.textContent(`${form} output.form-error`);
  check(refused.includes("allow_private"), `the private target is refused with a reason: ${refused}`);
  check(await page.isVisible("#flash.bad"), "the refusal is flashed");
  check(!(await page.$(`tr[data-webhook='${hook}']`)), "nothing was created");
  await page.check(`${form} [name=allow_private]`);
  await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
  await page.waitForSelector(`tr[data-webhook='${hook}']`);
  await page.waitForSelector("#flash.ok");
  const listed = await page.textContent(`tr[data-webhook='${hook}']`);
  check(listed.includes(env("DASH_HOOK_URL")) && listed.includes("completed, dead"), `the hook is listed: ${listed}`);
  check(!(await page.content()).includes(env("DASH_HOOK_SECRET")), "the page never shows the secret");
  await shot("webhooks");
  console.log("DONE");
} finally {
  await browser.close();
}
process.exit(0);
