// The report module (issue 24): a check's summary renders alone (its JSON, read back, gives the same text
// and JUnit: what `specconf merge` relies on), the verdict policy is one rule, every reporter renders every
// command it names, and no report uses another verdict vocabulary than verdict.ts's.
import { describe, expect, it } from "vitest";
import { checkOk } from "../../src/report/check-summary.ts";
import { judgeLaws } from "../../src/report/judged.ts";
import { render } from "../../src/report/reporters.ts";
import type { CheckSummary, Report } from "../../src/report/summary.ts";
import { VERDICT_WORDS } from "../../src/report/verdict.ts";
import { COVERAGE_LABELS } from "../../src/check/coverage.ts";

function summary(failed: number, pinned?: CheckSummary["pinned"]): CheckSummary {
  const labels = Object.fromEntries(COVERAGE_LABELS.map((label, i) => [label, 10 + i]));
  const laws = [
    { name: "positions", runs: 40, passed: 40 - failed, failed, ties: 1, notCheckable: 0, seconds: 1.25 },
    { name: "lossless", runs: 40, passed: 38, failed: 0, ties: 0, notCheckable: 2, seconds: 0.5 },
  ].map((law) =>
    law.failed > 0
      ? { ...law, violation: "row 3 at position 7", replay: "npx specconf replay f.json", message: "seed 5\ncase" }
      : law,
  );
  const judged = judgeLaws({ selected: ["positions", "lossless"], laws, notRun: [], cases: 80 });
  const coverage = { runs: 80, labels, below: [], enforced: true };
  const base = { seed: 5, laws, judged, coverage, runSeconds: 3, pinned };
  return { ...base, ok: checkOk(base) };
}

describe("reporters", () => {
  it("a check summary renders the same from its JSON as from itself (text and JUnit)", () => {
    for (const failed of [0, 2]) {
      const report: Report = { command: "check", summary: summary(failed) };
      const reread: Report = { command: "check", summary: JSON.parse(render(report, "json")) };
      for (const reporter of ["text", "junit"] as const)
        expect(render(reread, reporter)).toBe(render(report, reporter));
    }
  });

  it("the verdict: a failed law fails the run unless pinned, and a pin must still reproduce", () => {
    expect(summary(0).ok).toBe(true);
    expect(summary(2).ok).toBe(false);
    expect(summary(2, [{ law: "positions", finding: "f", reproduced: true }]).ok).toBe(true);
    expect(summary(0, [{ law: "positions", finding: "f", reproduced: false }]).ok).toBe(false);
  });

  it("text names each failure with its replay command; JUnit has one failure per failed law", () => {
    const report: Report = { command: "check", summary: summary(2) };
    const text = render(report, "text");
    expect(text).toContain("positions FAILED: row 3 at position 7\n  npx specconf replay f.json");
    expect(text).toMatch(
      /seed 5: FAILED \(positions failed\): 1 of 2 laws held on at least one case, 1 failed, 0 never checkable, 0 with no applicable case\n$/,
    );
    const junit = render(report, "junit");
    expect(junit.match(/<testcase /g)).toHaveLength(2);
    expect(junit.match(/<failure /g)).toHaveLength(1);
    expect(junit).toContain('<failure message="seed 5">');
  });

  it("replay and check --engine --golden use the one vocabulary", () => {
    const laws = [
      { law: "positions", status: "holds" as const, checked: 3, ties: 0 },
      { law: "lossless", status: "not-checkable" as const, checked: 0, ties: 0, reason: "no baseline" },
      { law: "row tokens", status: "fails" as const, checked: 1, ties: 2, violation: { message: "bad row" } },
    ];
    const golden = render(
      {
        command: "check --engine --golden",
        summary: { engine: "e", ok: false, checked: 2, cases: [{ suite: "s", case: "c", laws }], relaxations: [] },
      },
      "text",
    );
    const replay = render(
      {
        command: "replay",
        summary: {
          file: "f",
          reproduced: true,
          exact: false,
          recordedLaws: [],
          identicalTrace: null,
          crash: null,
          skipped: null,
          laws,
        },
        text: { lines: [] },
      },
      "text",
    );
    for (const text of [golden, replay]) {
      for (const word of Object.values(VERDICT_WORDS)) expect(text).toContain(word);
      expect(text).not.toMatch(/\bn\/c\b|\bok\b/);
    }
    expect(replay).toContain("FAILS (2 ties): bad row");
  });
});
