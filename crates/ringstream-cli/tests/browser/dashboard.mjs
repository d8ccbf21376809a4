// Opens the `ringstream serve` dashboard in Debian's chromium (driven by
// playwright-core, which brings no browser of its own), waits until the page
// shows live counters, a drawn chart and the inverter table, takes a
// full-page screenshot and prints one summary line:
//
//   SUMMARY {"status":"live","rows":90,...}
//
// Usage: node dashboard.mjs URL SCREENSHOT_PATH
// Exits 0 when everything was seen, 1 with a `FAIL: ...` line otherwise.
// Any console error, uncaught exception or HTTP error of the page is a
// failure.
//
// Environment:
//   CHROMIUM_PATH              the browser (default /usr/bin/chromium)
//   DASHBOARD_MIN_EVENTS       stats events to receive before the screenshot
//                              (default 2: the fewest that draw a chart line)
//   DASHBOARD_EXPECT_TRAFFIC=1 also wait until #rps shows more than 0 (the
//                              caller sends requests of its own meanwhile)

import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, screenshotPath] = process.argv.slice(2);
if (!url || !screenshotPath) {
  console.error("usage: node dashboard.mjs URL SCREENSHOT_PATH");
  process.exit(2);
}

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const MIN_EVENTS = Math.max(2, Number(process.env.DASHBOARD_MIN_EVENTS) || 2);
const EXPECT_TRAFFIC = process.env.DASHBOARD_EXPECT_TRAFFIC === "1";
// Each stats event takes a second; allow 20 s beyond those.
const WAIT_MS = 20_000 + MIN_EVENTS * 1000;
const started = Date.now();

// Whatever happens (a hung browser, a lost pipe), the script ends.
const WATCHDOG_MS = WAIT_MS + 40_000;
const watchdog = setTimeout(() => {
  console.log(`FAIL: the browser check did not finish within ${WATCHDOG_MS} ms`);
  process.exit(1);
}, WATCHDOG_MS);

const profile = mkdtempSync(join(tmpdir(), "ringstream-chromium-"));
const pageErrors = [];
const statsEvents = [];
let context;

async function snapshot(page) {
  return page.evaluate(() => {
    const text = (id) => document.getElementById(id)?.textContent ?? null;
    const rows = [...document.querySelectorAll("#inverters tbody tr")];
    return {
      status: text("status"),
      status_class: document.getElementById("status")?.className ?? null,
      rps: text("rps"),
      requests: text("requests"),
      connections: text("connections"),
      bytes_in: text("bytes-in"),
      bytes_out: text("bytes-out"),
      rss: text("rss"),
      total_power: text("total-power"),
      inverter_count: text("inverter-count"),
      rows: rows.length,
      first_row: rows[0] ? [...rows[0].cells].map((c) => c.textContent) : null,
    };
  });
}

// Waits for `predicate` (run in the page) to hold; on timeout, fails naming
// `what` and showing what the page shows.
async function waitFor(page, what, predicate, arg) {
  const left = Math.max(1000, WAIT_MS - (Date.now() - started));
  try {
    await page.waitForFunction(predicate, arg, { timeout: left, polling: 100 });
  } catch (err) {
    const seen = await snapshot(page).catch(() => null);
    throw new Error(`${what}: not seen within ${WAIT_MS} ms (${err.message.split("\n")[0]}); page shows ${JSON.stringify(seen)}`);
  }
}

async function main() {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
    timeout: 30_000,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (msg) => {
    if (msg.type() === "error") pageErrors.push(`console.error: ${msg.text()} (${msg.location().url || "?"})`);
  });
  page.on("pageerror", (err) => pageErrors.push(`uncaught: ${err.message}`));
  page.on("crash", () => pageErrors.push("the page crashed"));
  page.on("response", (r) => {
    if (r.status() >= 400) pageErrors.push(`HTTP ${r.status()} for ${r.url()}`);
  });

  // The stats events as they arrive on the wire, independent of the page's
  // own handling of them.
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  cdp.on("Network.eventSourceMessageReceived", (e) => {
    if (e.eventName === "stats") statsEvents.push(JSON.parse(e.data));
  });

  const response = await page.goto(url, { waitUntil: "domcontentloaded", timeout: WAIT_MS });
  if (!response || response.status() !== 200) {
    throw new Error(`GET ${url} answered ${response ? response.status() : "nothing"}`);
  }
  const title = await page.title();

  await waitFor(page, "#status reads `live`", () => {
    const s = document.getElementById("status");
    return s.textContent === "live" && s.className === "live";
  });
  await waitFor(page, "the counters (#rps a number, #requests >= 1, #rss a size)", () => {
    const t = (id) => document.getElementById(id).textContent;
    const size = /^\d+(\.\d)? (B|KiB|MiB|GiB|TiB)$/;
    return (
      /^\d+\.\d$/.test(t("rps")) &&
      /^\d+$/.test(t("requests")) && Number(t("requests")) >= 1 &&
      /^\d+$/.test(t("connections")) &&
      size.test(t("bytes-in")) && size.test(t("bytes-out")) &&
      size.test(t("rss")) && t("rss") !== "0 B"
    );
  });
  await waitFor(page, "the inverter table (>= 24 rows, `Inverter 01` first) and the array power", () => {
    const rows = [...document.querySelectorAll("#inverters tbody tr")];
    return (
      rows.length >= 24 &&
      /^Inverter 01\b/.test(rows[0].cells[0].textContent) &&
      rows.every((r) => /^Inverter \d{2,}\b/.test(r.cells[0].textContent) && r.cells.length === 7) &&
      /^\d+\.\d kW$/.test(document.getElementById("total-power").textContent) &&
      document.getElementById("inverter-count").textContent === `(${rows.length})`
    );
  });

  // MIN_EVENTS stats events on the wire, then the page must show the
  // counters of one of them (a newer one may be on its way).
  while (statsEvents.length < MIN_EVENTS) {
    if (Date.now() - started > WAIT_MS) {
      throw new Error(`only ${statsEvents.length} stats event(s) arrived within ${WAIT_MS} ms`);
    }
    await page.waitForTimeout(100);
  }
  await waitFor(
    page,
    "#requests showing the count of a received stats event",
    (counts) => counts.includes(document.getElementById("requests").textContent),
    statsEvents.map((s) => String(s.requests)),
  );
  for (const s of statsEvents) {
    for (const key of ["requests", "requests_per_second", "bytes_in", "bytes_out", "connections_open", "errors", "rss_bytes"]) {
      if (typeof s[key] !== "number") throw new Error(`stats event without a number \`${key}\`: ${JSON.stringify(s)}`);
    }
  }

  if (EXPECT_TRAFFIC) {
    await waitFor(page, "#rps above 0 while requests are being sent", () => Number(document.getElementById("rps").textContent) > 0);
  }

  // The chart: with two or more points the page strokes the line in its
  // accent colour (#f5b942); count the canvas pixels of that colour.
  await waitFor(page, "the chart's line", () => {
    const c = document.getElementById("chart");
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] > 128 && Math.abs(px[i] - 245) < 40 && Math.abs(px[i + 1] - 185) < 40 && Math.abs(px[i + 2] - 66) < 40) n++;
    }
    return n >= 100;
  });
  const chartLinePixels = await page.evaluate(() => {
    const c = document.getElementById("chart");
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] > 128 && Math.abs(px[i] - 245) < 40 && Math.abs(px[i + 1] - 185) < 40 && Math.abs(px[i + 2] - 66) < 40) n++;
    }
    return n;
  });

  const seen = await snapshot(page);
  await page.screenshot({ path: screenshotPath, fullPage: true });
  if (pageErrors.length > 0) throw new Error(`the page reported errors: ${pageErrors.join(" | ")}`);

  const summary = {
    ...seen,
    title,
    stats_events: statsEvents.length,
    last_event: statsEvents[statsEvents.length - 1],
    chart_line_pixels: chartLinePixels,
    page_errors: pageErrors.length,
    browser: context.browser()?.version() ?? null,
    elapsed_ms: Date.now() - started,
  };
  console.log("SUMMARY " + JSON.stringify(summary));
}

let code = 0;
try {
  await main();
} catch (err) {
  console.log(`FAIL: ${err.message}`);
  if (statsEvents.length > 0) console.log(`stats events received: ${statsEvents.length}, last ${JSON.stringify(statsEvents[statsEvents.length - 1])}`);
  if (pageErrors.length > 0) console.log(`page errors: ${pageErrors.join(" | ")}`);
  code = 1;
} finally {
  await context?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
  clearTimeout(watchdog);
}
process.exit(code);
