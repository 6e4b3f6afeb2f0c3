// Issue 23's failure mode on the CPU: on the WebGPU EP a draft row's log-softmax normalizer came back
// -Infinity, the tree's cumulative scores became non-finite, and the failure writer died on the trace's
// schema ("/events/1/rows/5/children/0/score must be number": an internal error, no record). Here the same
// non-finite value is made on the CPU (the native run's output overwritten for draft forwards of two or more
// rows) and fed through the engine, the property runner and the failure writer: the run fails cleanly naming
// the forward's step, phase, request and row, no trace holds the value, and a record is always written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { lawProperty, runLawProperty } from "../../src/properties/law-property.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { validateFailureRecord, writeFailure } from "../../src/failures/failure-file.ts";
import { loadReplayInput } from "../../src/failures/replay-input.ts";
import { RUNS_TO_COMPLETION } from "../../src/check/runner.ts";
import { ModelSession } from "../../src/runtime/ort.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-non-finite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A tree-drafting case on the tiny preset (topk 2: scored children in the trace). */
const treeCase = () =>
  defaultCase({
    preset: "tiny",
    draft: "mirror",
    seed: 5,
    numRequests: 2,
    maxNewTokens: 6,
    engine: { numSteps: 3, topk: 2 },
  });

/** From now on, every draft forward of two or more rows returns -Infinity as row 1's normalizer. */
function corruptDraftNormalizers(): void {
  const original = ModelSession.prototype.runTensors;
  vi.spyOn(ModelSession.prototype, "runTensors").mockImplementation(function (this: ModelSession, inputs, outputs) {
    const out = original.call(this, inputs, outputs);
    if (inputs.hidden_in && inputs.tokens.dims[0] >= 2) (out.log_normalizer.data as Float32Array)[1] = -Infinity;
    return out;
  });
}

describe("non-finite forward outputs (issue 23)", () => {
  it("a trace with a non-finite child score still gets its failure record, the reason naming the JSON path", async () => {
    const testCase = treeCase();
    const { trace } = await runCase(testCase, { trace: true });
    const event = trace!.events.findIndex((e) => e.rows.some((row) => (row.children?.length ?? 0) > 0));
    expect(event, "the case drafts a tree").toBeGreaterThanOrEqual(0);
    const row = trace!.events[event].rows.findIndex((r) => (r.children?.length ?? 0) > 0);
    trace!.events[event].rows[row].children![0].score = -Infinity; // what the WebGPU normalizer produced
    const written = writeFailure(
      {
        property: "tree selection",
        laws: ["tree selection"],
        violation: { message: "a scored child is not finite" },
        seed: 5,
        path: "0",
        testCase,
        trace,
      },
      dir,
    );
    const record = JSON.parse(readFileSync(written.file, "utf8"));
    expect(validateFailureRecord(record)).toEqual([]);
    expect(record.traceFile).toBeUndefined();
    expect(record.traceOmitted).toContain(`/events/${event}/rows/${row}/children/0/score`);
    expect(existsSync(join(dir, record.caseFile))).toBe(true);
    expect(loadReplayInput(written.file).kind).toBe("failure");
  });

  it("the engine fails the run naming the forward and row; no trace, and the record is written", async () => {
    corruptDraftNormalizers();
    const run = await runLawProperty(lawProperty(RUNS_TO_COMPLETION, "a non-finite draft normalizer"), {
      numRuns: 20,
      seed: 23,
      laws: new Set(), // only whether each case runs to completion
      failureDir: dir,
      shrinkSeconds: 20,
    });
    expect(run.error, "a harness error instead of a failing case").toBeUndefined();
    expect(run.failure, "no case drafted with two rows").toBeDefined();
    const { check, file } = run.failure!;
    expect(check.run, "the failed run has no trace").toBeUndefined();
    const message = check.results.find((result) => result.law === RUNS_TO_COMPLETION)!.violation!.message;
    expect(message).toMatch(
      /NonFiniteOutputError: step \d+, draft-\w+ forward of \S+ \(request \d+, position \d+\): output log_normalizer of row 1 is -Infinity on EP 'cpu'/,
    );
    const record = JSON.parse(readFileSync(file!, "utf8"));
    expect(record.violation.message).toBe(message);
    expect(record.traceFile).toBeUndefined();
  });
});
