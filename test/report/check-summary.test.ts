// Issue 25 item 8: the report agrees with its table. A law whose focused property the engine cannot run may
// still be checked, and fail, on the other properties' runs: it is then not "never exercised" (the newcomer saw
// "law 'bonus stride': not exercised" above a table where bonus stride had caught the bug). A failure paragraph
// leads with the laws that failed, not with the property whose case found them ("property 'reference decode'
// failed" read as reference decode failing when mirror acceptance had). The coverage note names why the floor
// is not enforced only when it is not, and labels the engine cannot reach are said to be unenforced.
import { describe, expect, it } from "vitest";
import type { Capabilities } from "../../src/adapter/protocol.ts";
import { summarizeCheck } from "../../src/report/check-summary.ts";
import { render } from "../../src/report/reporters.ts";
import { emptySuiteResult } from "../../src/properties/suite.ts";
import { describeFailure, notRunLine, type PropertyRun } from "../../src/properties/law-property.ts";
import { emptyStats } from "../../src/properties/law-property.ts";

const capabilities = { modes: ["speculative"], drafts: ["mirror"] } as unknown as Capabilities;

function engineSummary(runs: number, lawFilter = false) {
  const suite = emptySuiteResult();
  suite.stats.set("bonus stride", { ...emptyStats(), runs, passed: runs - 1, failed: 1 });
  suite.stats.set("lossless", { ...emptyStats(), runs, passed: runs });
  suite.violations.set("bonus stride", "round 2's bonus is read with stride N");
  suite.notExercised.push(
    { law: "bonus stride", reason: "trees (topk > 1)" },
    { law: "placeholder resolution", reason: "overlap scheduling" },
  );
  for (let run = 0; run < runs; run++) suite.coverage.add([]);
  return summarizeCheck({
    seed: 11,
    selected: ["bonus stride", "lossless", "placeholder resolution"],
    lawFilter,
    suite,
    engine: { command: "engine", name: "engine", restarts: 0, capabilities },
  });
}

describe("the check report agrees with its table", () => {
  it("a law that failed (or passed) on other properties' runs is not listed as having no applicable case", () => {
    const summary = engineSummary(60);
    expect(summary.judged.noCase).toEqual([
      {
        law: "placeholder resolution",
        kind: "capability missing",
        reason: "the engine lacks overlap scheduling",
        runs: 0,
      },
    ]);
    expect(summary.judged.failed).toEqual(["bonus stride"]);
    expect(summary.propertiesNotRun).toEqual(["'bonus stride' (the engine lacks trees (topk > 1))"]);
    const text = render({ command: "check", summary }, "text");
    expect(text).toContain("bonus stride FAILED: round 2's bonus is read with stride N");
    expect(text).toContain(
      "1 law with no applicable case:\n  placeholder resolution (capability missing: the engine lacks overlap scheduling)",
    );
    expect(text).not.toMatch(/no applicable case:[^\n]*\n[^\n]*bonus stride/);
    expect(text).toMatch(/properties not run \([^\n]*\): 'bonus stride'/);
  });

  it("the coverage note says 'not enforced' only when it is not, and why", () => {
    const enforced = render({ command: "check", summary: engineSummary(60) }, "text");
    expect(enforced).not.toContain("not enforced: ");
    expect(enforced).not.toContain("--law");
    const few = render({ command: "check", summary: engineSummary(10) }, "text");
    expect(few).toContain("not enforced: under 50 runs (10)");
    expect(few).not.toContain("--law");
    expect(render({ command: "check", summary: engineSummary(60, true) }, "text")).toContain(
      "not enforced: --law given",
    );
    // Labels this engine (no trees, no overlap, no trace) cannot reach: shown in the table, said to be unenforced.
    const summary = engineSummary(60);
    expect(summary.coverage.unreachable?.length).toBeGreaterThan(0);
    expect(enforced).toContain(
      `coverage not enforced for labels the engine cannot reach: ${summary.coverage.unreachable![0]}`,
    );
  });

  it("a failure paragraph leads with the laws that failed, then the property whose case found them", () => {
    const run = {
      law: "reference decode",
      runs: 7,
      failure: {
        laws: ["mirror acceptance"],
        seed: 3,
        shrinks: 4,
        fastCheck: '{ seed: 3, path: "0:1" }',
        replay: "npx specconf replay f.json",
        testCase: { workload: { requests: [{ prompt: [1, 2, 3] }] } },
        check: {
          results: [{ law: "mirror acceptance", status: "fails", violation: { message: "round 1 accepted 1 of 3" } }],
        },
      },
    } as unknown as PropertyRun;
    const text = describeFailure(run);
    expect(text.split("\n")[0]).toMatch(
      /^mirror acceptance FAILED on a case of property 'reference decode' after 7 runs/,
    );
    expect(text).toContain("  mirror acceptance: round 1 accepted 1 of 3");
    expect(text).not.toContain("property 'reference decode' failed");
    expect(notRunLine("bonus stride", "trees")).toBe(
      "property 'bonus stride' not run: the engine lacks trees (law 'bonus stride' still checks the other properties' runs)",
    );
  });
});
