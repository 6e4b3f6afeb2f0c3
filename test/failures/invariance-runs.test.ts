// Issue 25 item 8: an invariance failure shows both runs and says which one diverged from the reference. The
// wrong token may be in the twin (here the unchunked twin runs with a cross-request mask leak, the chunked case
// runs clean): the judgement names the twin, the twin's step table is marked where it diverged, the case's run
// is not marked as the offender, and the failure record keeps the twin's trace beside the case's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { loadModels } from "../../src/case/models.ts";
import type { CaseCheck } from "../../src/check/runner.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { invarianceMarks, judgeInvariance, judgementLine, twinStepTable } from "../../src/failures/invariance-runs.ts";
import { writeLawFailures } from "../../src/failures/law-failures.ts";
import { loadReplayInput, readRecordedTwinTrace } from "../../src/failures/replay-input.ts";
import { law as chunkInvariance, unchunkedTwin } from "../../src/laws/chunk-invariance.ts";
import { ReferenceOracle } from "../../src/reference/oracle.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-invariance-runs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = defaultCase({
  preset: "tiny",
  draft: "mirror",
  seed: 5,
  numRequests: 3,
  maxNewTokens: 12,
  engine: { numSteps: 3, numDraftTokens: 4, chunkSize: 3, pageSize: 2 },
});
const chunked: Case = {
  ...base,
  workload: { ...base.workload, requests: base.workload.requests.map((r) => ({ ...r, arrivalStep: 0 })) },
};
const withFaults = (testCase: Case, faults: FaultName[]): Case => ({
  ...testCase,
  engine: { ...testCase.engine, faults },
});

/** The chunked case's check against its unchunked twin, the fault planted in the case's run or in the twin. */
async function checkWithFaultIn(where: "run" | "twin"): Promise<{ check: CaseCheck; oracle: ReferenceOracle }> {
  const leak: FaultName[] = ["cross-request-mask-leak"];
  const testCase = where === "run" ? withFaults(chunked, leak) : chunked;
  const twinCase = withFaults(unchunkedTwin(chunked), where === "twin" ? leak : []);
  const run = await runCase(testCase);
  const twin = await runCase(twinCase);
  const oracle = await ReferenceOracle.create(loadModels(chunked), chunked.engine.runtime);
  const verdict = await chunkInvariance.check({ testCase, run, twin, oracle });
  expect(verdict.status).toBe("fails");
  const check: CaseCheck = {
    testCase,
    results: [{ ...verdict, law: chunkInvariance.name }],
    seconds: {},
    labels: [],
    run,
    twins: { unchunked: { testCase: twinCase, result: twin } },
  };
  return { check, oracle };
}

describe("an invariance failure shows both runs and which one diverged", () => {
  it("the wrong token in the twin: the twin is named and marked, the case's run is not", async () => {
    const { check, oracle } = await checkWithFaultIn("twin");
    const judgement = (await judgeInvariance(check, chunkInvariance.name, oracle))!;
    expect(judgement.diverged).toBe("the twin");
    expect(judgement.run).toBeUndefined();
    expect(judgement.twinRun?.event).toBeDefined();
    expect(judgementLine(judgement)).toMatch(/^chunk invariance: the unchunked run diverged from the reference/);
    const violation = check.results[0].violation!;
    const marks = invarianceMarks(judgement, chunkInvariance.name, {
      event: violation.event!,
      note: violation.message,
    });
    expect(marks.run).toBeUndefined();
    expect(marks.twin?.event).toBe(judgement.twinRun!.event);
    const table = twinStepTable(check, judgement, { mark: marks.twin }).join("\n");
    expect(table).toContain("the unchunked run (the twin chunk invariance compared with):");
    expect(table).toMatch(new RegExp(`>>\\s+${judgement.twinRun!.event} `));
  });

  it("the wrong token in the case's run: the case's run is named and marked where it diverged", async () => {
    const { check, oracle } = await checkWithFaultIn("run");
    const judgement = (await judgeInvariance(check, chunkInvariance.name, oracle))!;
    expect(judgement.diverged).toBe("the case's run");
    expect(judgement.twinRun).toBeUndefined();
    const marks = invarianceMarks(judgement, chunkInvariance.name, undefined);
    expect(marks.run?.event).toBe(judgement.run!.event);
    expect(marks.twin).toBeUndefined();
  });

  it("the failure record keeps the twin's trace beside the case's", async () => {
    const { check } = await checkWithFaultIn("twin");
    const written = await writeLawFailures(
      { property: "chunk invariance", seed: 1, shrunkPath: "0", firstPath: "0", shrunk: check, first: check },
      dir,
    );
    const file = written.get(chunkInvariance.name)!.file;
    const input = loadReplayInput(file);
    expect(input.kind === "failure" && input.record.twin).toMatchObject({
      kind: "unchunked",
      describe: "the unchunked run",
    });
    expect(readRecordedTwinTrace(input)?.events).toEqual(
      JSON.parse(JSON.stringify(check.twins.unchunked.result.trace.events)),
    );
  });
});
