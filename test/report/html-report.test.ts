// The HTML report in a real browser (issue 27): `check --html` and `specconf report` on a planted fault's
// shrunk failure, loaded in headless Chromium (Debian's package, test/helpers/chromium.ts), and the rendered
// DOM checked against the failure's own files: the draft tree of the failing round (its candidates, the
// verified set, the accepted path), both runs' step tables (a line per forward of each run) with the first
// divergence and the violation marked, the accept-length histograms (a round per verify result), the
// verdict table and the coverage.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.ts";
import { reportCommand } from "../../src/cli/report.ts";
import { COVERAGE_LABELS } from "../../src/check/coverage.ts";
import { readDraftRounds } from "../../src/laws/draft-tree.ts";
import type { FailureRecord } from "../../src/failures/failure-file.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { replayFile } from "../../src/report/failure-view.ts";
import { capture } from "../helpers/capture.ts";
import { launchChromium } from "../helpers/chromium.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-html-"));
const seed = process.env.SPECCONF_SEED ?? "5";
const replayCommandLine = `SPECCONF_SEED=${seed} npx vitest run test/report/html-report.test.ts`;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let recordFile: string;
let checkHtmlFile: string;

beforeAll(async () => {
  checkHtmlFile = join(dir, "check.html");
  const argv = [
    ...["--law", "bonus-stride", "--law", "lossless", "--fault", "bonus-stride", "--runs", "20", "--seed", seed],
    ...["--shrink-seconds", "5", "--failures", join(dir, "failures"), "--html", checkHtmlFile, "--json"],
  ];
  const check = await capture(() => checkCommand(argv));
  expect(check.code, `${check.stderr}\nreplay: ${replayCommandLine}`).toBe(1);
  const summary = JSON.parse(check.stdout) as { laws: { name: string; replay?: string }[] };
  const replay = summary.laws.find((law) => law.name === "bonus stride")?.replay;
  expect(replay, "check wrote bonus stride's failure record").toBeDefined();
  recordFile = replayFile(replay!);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(file: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(pathToFileURL(file).href);
  return page;
}

const count = (page: Page, selector: string) => page.locator(selector).count();

describe("specconf report FILE in headless Chromium", () => {
  it(
    "shows the failing round's tree, both step tables with the divergence marked, and the histograms",
    { timeout: 120_000 },
    async () => {
      const out = join(dir, "failure.html");
      const report = await capture(() => reportCommand([recordFile, "--out", out]));
      expect(report.code, report.stderr).toBe(0);
      const record = JSON.parse(readFileSync(recordFile, "utf8")) as FailureRecord;
      const trace = JSON.parse(readFileSync(join(dir, "failures", record.traceFile!), "utf8")) as Trace;
      const page = await open(out);

      expect(await page.locator("#verdict").textContent()).toBe("FAILED");
      expect(await page.locator('table.verdicts tr[data-law="bonus stride"] td.verdict').first().textContent()).toBe(
        "FAILS",
      );

      // The tree of the verify event the violation names: every candidate of its round, the verified set and
      // the accepted path, as the recorded trace has them.
      const event = trace.events.find((candidate) => candidate.index === record.violation.event)!;
      const result = event.verify!.find((entry) => entry.request === record.violation.request)!;
      const round = readDraftRounds(trace).find(
        (candidate) => candidate.request === result.request && candidate.verify?.event === event.index,
      )!;
      const verifyRows = event.rows.filter((row) => row.request === result.request);
      expect(await count(page, "svg.draft-tree g.node")).toBe(1 + round.candidates.size);
      expect(await count(page, "svg.draft-tree g.node.verified")).toBe(verifyRows.length);
      expect(await count(page, "svg.draft-tree g.node.accepted")).toBe(result.acceptLen);
      for (const row of verifyRows.slice(1))
        expect(
          await page
            .locator(`svg.draft-tree g.node.verified[data-candidate="${row.candidate}"]`)
            .getAttribute("data-token"),
        ).toBe(String(row.token));
      expect(await page.locator("svg.draft-tree").boundingBox()).not.toBeNull();

      // Both runs' step tables, a line per forward; the failing run's first divergence is the violation's
      // event (the bonus differs there from the run with the fault off), marked in both tables.
      expect(await count(page, "#run-a table.steps tbody tr")).toBe(trace.events.length);
      expect(await count(page, "#run-b table.steps tbody tr")).toBeGreaterThan(0);
      expect(await page.locator("#run-a h4").textContent()).toContain("bonus-stride");
      expect(await page.locator("#run-b h4").textContent()).toContain("faults off");
      const divergence = page.locator("#first-divergence");
      expect(await divergence.getAttribute("data-event")).toBe(String(record.violation.event));
      expect(await divergence.getAttribute("class")).toContain("violation");
      expect(await divergence.isVisible()).toBe(true);
      expect(await count(page, "#run-b tr.divergence")).toBe(1);
      expect(await page.locator(".divergence-note").textContent()).toContain(`request ${record.violation.request}`);

      // Histograms: one bar per accept length, the failing run's counts adding up to its verify results.
      const rounds = trace.events.flatMap((candidate) => candidate.verify ?? []).length;
      const counts = await page
        .locator(".histogram")
        .first()
        .locator("g.bar")
        .evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute("data-count"))));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(rounds);
      expect(await count(page, ".histogram")).toBe(2);
      await page.close();
    },
  );
});

describe("specconf check --html in headless Chromium", () => {
  it("shows the verdict table, the coverage and one section per failing law", { timeout: 60_000 }, async () => {
    const page = await open(checkHtmlFile);
    expect(await page.locator("#verdict").textContent()).toBe("FAILED");
    expect(await count(page, "table.verdicts tbody tr")).toBeGreaterThanOrEqual(2);
    expect(await count(page, "table.coverage tbody tr")).toBe(COVERAGE_LABELS.length);
    const failing = await page
      .locator("table.verdicts tr.status-fails")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-law")));
    const sections = await page
      .locator("section.failure")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-law")));
    expect(sections).toEqual(failing);
    expect(await count(page, "section.failure svg.draft-tree")).toBe(sections.length);
    await page.close();
  });
});
