// The HTML report's parts without a browser: everything from files is escaped, and the first divergence is
// found request by request, whatever the engines' batching.
import { describe, expect, it } from "vitest";
import { firstDivergence } from "../../src/report/html/divergence.ts";
import { renderHtml } from "../../src/report/html/page.ts";
import type { Trace, TraceEvent } from "../../src/trace/schema.ts";

const verify = (index: number, request: number, bonus: number): TraceEvent => ({
  index,
  phase: "verify",
  rows: [
    { request, token: 4, position: 6, predict: 7 },
    { request, token: 7, position: 7, predict: bonus },
  ],
  verify: [{ request, acceptIndex: [0, 1], acceptLen: 2, bonus }],
});

const trace = (events: TraceEvent[]): Trace => ({ formatVersion: 1, engine: { name: "t" }, events });

describe("the HTML report", () => {
  it("escapes what it shows (an engine name or violation cannot add markup)", () => {
    const html = renderHtml({
      title: "specconf <b>",
      subtitle: `engine "<script>alert(1)</script>"`,
      ok: false,
      verdict: "seed 1: FAILED <i>",
      verdicts: [{ law: "lossless", status: "fails", detail: "<img src=x onerror=alert(1)>" }],
      failures: [],
    });
    expect(html).not.toMatch(/<script>|<img|<b>|<i>/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("finds the first divergence request by request, across different event numbering", () => {
    // Run A verifies requests 0 and 1 in separate events; run B in other events; request 1's bonus differs.
    const a = trace([verify(0, 0, 9), verify(1, 1, 9), verify(2, 1, 5)]);
    const b = trace([verify(0, 1, 9), verify(1, 0, 9), verify(2, 1, 6)]);
    const divergence = firstDivergence(a, b);
    expect(divergence).toMatchObject({ request: 1, eventA: 2, eventB: 2 });
    expect(firstDivergence(a, a)).toBeUndefined();
  });
});

describe("specconf report: bad input", () => {
  it("is exit 2 with one line: no FILE, a case file instead of a record, an --out that is the input", async () => {
    const { capture } = await import("../helpers/capture.ts");
    const { reportCommand } = await import("../../src/cli/report.ts");
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "specconf-report-bad-"));
    const caseFile = join(dir, "c.json");
    writeFileSync(caseFile, JSON.stringify({ formatVersion: 1, model: { preset: "tiny" } }));
    for (const argv of [[], [caseFile, "--out", join(dir, "c.html")], [caseFile, "--out", caseFile]]) {
      const { code, stderr } = await capture(() => reportCommand(argv));
      expect(code, stderr).toBe(2);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toMatch(/^specconf report: /);
    }
  });
});
