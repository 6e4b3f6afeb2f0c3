// Runs the reference engine on golden cases and dumps what another engine would hand to validate:
// outputs lines (JSON Lines objects) and the trace. `golden verify` and the fault tests use it; so does
// `specconf golden dump`, which writes them to files (a worked example of the formats).
import type { Case } from "../case/case.ts";
import type { FaultName } from "../case/faults.ts";
import { runCase } from "../engine/run-case.ts";
import type { RunResult } from "../trace/run-result.ts";
import { readRounds } from "../laws/rounds.ts";
import type { Trace } from "../trace/schema.ts";
import { OUTPUTS_FORMAT_VERSION, textFieldsOf, type OutputLine, type ReportedOutput } from "../trace/outputs-line.ts";

/** The per-request outputs of a run, as the outputs format and the adapter protocol carry them. */
export function requestOutputsOf(result: RunResult, chain: boolean): ReportedOutput[] {
  const rounds = readRounds(result.trace);
  return result.outputs.map((output) => {
    const first = rounds.find((round) => round.request === output.id);
    const entry: ReportedOutput = { id: output.id, tokens: output.tokens, finishReason: output.finishReason };
    if (output.stopTokenId !== undefined) entry.stopTokenId = output.stopTokenId;
    if (output.finishedLength !== undefined) entry.finishedLength = output.finishedLength;
    if (output.logprobs) entry.logprobs = output.logprobs;
    Object.assign(entry, textFieldsOf(output));
    if (output.acceptLens.length > 0) entry.acceptLens = output.acceptLens;
    if (chain && first) entry.firstRoundDrafts = first.verifyRows.slice(1).map((row) => row.token);
    return entry;
  });
}

export function outputLinesOf(caseName: string, outputs: readonly ReportedOutput[]): OutputLine[] {
  return outputs.map((output) => ({ formatVersion: OUTPUTS_FORMAT_VERSION, case: caseName, ...output }));
}

export function caseWithFaults(testCase: Case, faults: readonly FaultName[]): Case {
  return { ...testCase, engine: { ...testCase.engine, faults: [...faults] } };
}

/** A golden case (golden/schema.ts) as far as running it goes: its name and its case. */
export async function runGoldenCase(
  goldenCase: { readonly name: string; readonly case: Case },
  faults: readonly FaultName[] = [],
): Promise<{ lines: OutputLine[]; trace: Trace; result: RunResult }> {
  const testCase = caseWithFaults(goldenCase.case, faults);
  const result = await runCase(testCase);
  return {
    lines: outputLinesOf(goldenCase.name, requestOutputsOf(result, testCase.engine.topk === 1)),
    trace: result.trace,
    result,
  };
}
