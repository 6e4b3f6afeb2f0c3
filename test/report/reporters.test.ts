// The report module (issue 24): a check's summary renders alone (its JSON, read back, gives the same text
// and JUnit: what `specconf merge` relies on), the verdict policy is one rule, every reporter renders every
// command it names, and no report uses another verdict vocabulary than verdict.ts's.
import { describe, expect, it } from "vitest";
import { checkOk } from "../../src/report/check-summary.ts";
import { judgeLaws, rowsOfVerdicts, unmetRequirement, type LawRequirement } from "../../src/report/judged.ts";
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
    const pinned = summary(2, [{ law: "positions", finding: "f", reproduced: true }]);
    expect(pinned.ok).toBe(true);
    expect(render({ command: "check", summary: pinned }, "text")).toMatch(
      /seed 5: no law failed but the pinned findings: 1 of 2 laws held on at least one case, 1 failed, /,
    );
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

  it("every format says what judged nothing and why, and never that a law which judged nothing holds", () => {
    const laws = [
      { name: "positions", runs: 4, passed: 4, failed: 0, ties: 0, notCheckable: 0, seconds: 0.1 },
      {
        ...{ name: "bonus stride", runs: 4, passed: 0, failed: 0, ties: 0, notCheckable: 4, seconds: 0 },
        reasons: { "the trace has no verify events with results": 3, "no ragged block": 1 },
      },
      { name: "chunk invariance", runs: 0, passed: 0, failed: 0, ties: 0, notCheckable: 0, seconds: 0 },
      { name: "usage counts", runs: 0, passed: 0, failed: 0, ties: 0, notCheckable: 0, seconds: 0 },
    ];
    const selected = laws.map((law) => law.name);
    const notRun = [{ law: "chunk invariance", reason: "chunked prefill" }];
    const judged = judgeLaws({ selected, laws, notRun, cases: 12 });
    expect(judged.neverCheckable).toEqual([
      {
        law: "bonus stride",
        kind: "not checkable",
        reason: "the trace has no verify events with results (3 of 4); no ragged block (1 of 4)",
        runs: 4,
      },
    ]);
    expect(judged.noCase.map(({ law, kind, reason }) => [law, kind, reason])).toEqual([
      ["chunk invariance", "capability missing", "the engine lacks chunked prefill"],
      ["usage counts", "no case drawn", "it applies to none of the 12 generated cases"],
    ]);
    const coverage = { runs: 12, labels: {}, below: [], enforced: false, notEnforcedBecause: "under 50 runs (12)" };
    const base = { seed: 9, laws, judged, coverage, runSeconds: 1 };
    const report: Report = { command: "check", summary: { ...base, ok: checkOk(base) } };
    const text = render(report, "text");
    const last =
      "seed 9: no law failed: 1 of 4 laws held on at least one case, 1 never checkable, 2 with no applicable case";
    expect(text.trimEnd().split("\n").at(-1)).toBe(last);
    expect(text).toContain("  chunk invariance (capability missing: the engine lacks chunked prefill)\n");
    expect(text).toContain("  usage counts (no case drawn: it applies to none of the 12 generated cases)\n");
    const html = render(report, "html");
    expect(html).toContain(`<p class="verdict-line">${last}</p>`);
    expect(html).toMatch(/data-law="usage counts"><td>usage counts<\/td><td class="verdict">no applicable case<\/td>/);
    expect(html).toContain("no case drawn: it applies to none of the 12 generated cases");
    expect(html).not.toContain("every law holds");
    const junit = render(report, "junit");
    expect(junit).toContain('tests="4" failures="0" errors="0" skipped="3"');
    expect(junit).toContain('<skipped message="capability missing: the engine lacks chunked prefill"/>');
    // --require-laws over the same rows: a count above what judged a case, or a law that judged none, fails.
    for (const [required, ok] of [
      [{ count: 1 }, true],
      [{ count: 2 }, false],
      [{ laws: ["positions"] }, true],
      [{ laws: ["positions", "bonus stride"] }, false],
    ] as [LawRequirement, boolean][]) {
      const unmet = unmetRequirement(required, judged);
      expect(unmet === undefined, JSON.stringify(required)).toBe(ok);
      const summary = { ...base, required: { ...required, ...(unmet ? { unmet } : {}) } };
      expect(checkOk(summary)).toBe(ok);
    }
  });

  it("a golden check and a replay count their verdicts instead of saying every law holds", () => {
    const laws = [
      { law: "positions", status: "holds" as const, checked: 3, ties: 0 },
      { law: "lossless", status: "not-checkable" as const, checked: 0, ties: 0, reason: "no baseline" },
    ];
    const cases = [{ suite: "s", case: "c", laws }];
    const judged = judgeLaws({
      selected: ["positions", "lossless", "usage counts"],
      laws: rowsOfVerdicts(cases),
      notRun: [],
      cases: 1,
      caseKind: "golden",
    });
    const golden = render(
      {
        command: "check --engine --golden",
        summary: { engine: "e", ok: true, checked: 1, cases, judged, relaxations: [] },
      },
      "text",
    );
    expect(golden).toContain("lossless (no baseline)");
    expect(golden).toContain("usage counts (no case drawn: it applies to none of the 1 golden cases)");
    expect(golden.trimEnd().split("\n").at(-1)).toBe(
      "1 cases through 'e' (e): no law failed: 1 of 3 laws held on at least one case, 1 never checkable, 1 with no applicable case",
    );
    const replay = {
      file: "f",
      reproduced: false,
      exact: false,
      recordedLaws: [],
      identicalTrace: null,
      crash: null,
      skipped: null,
      laws,
    };
    expect(render({ command: "replay", summary: replay, text: { lines: [] } }, "text")).toContain(
      "no law fails: 1 law holds, 1 not checkable",
    );
  });
});
