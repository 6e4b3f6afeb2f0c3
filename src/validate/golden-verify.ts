// `golden verify`: the reference engine against its own golden files. Each case is run, its outputs and
// trace go through the same validation another engine's would (so validate is exercised on every
// verify), and the stored margins are recomputed: a margin that moved by epsilon or more could turn a
// tie into a failure (or back), so it is reported as drift.
import type { FaultName } from "../case/faults.ts";
import { requestSampling } from "../sampling/params.ts";
import { PROFILES } from "../profiles/profiles.ts";
import { goldenOracle } from "./recorded.ts";
import { Validation, type ValidationReport } from "./validate.ts";
import { runGoldenCase } from "../adapter/reference-outputs.ts";
import type { Golden } from "../golden/schema.ts";

export interface MarginDrift {
  case: string;
  request: number;
  index: number;
  stored: number;
  recomputed: number;
}

export interface VerifyResult {
  file: string;
  suite: string;
  report: ValidationReport;
  drift: MarginDrift[];
  ok: boolean;
}

export async function verifyGolden(
  golden: Golden,
  file: string,
  options: { faults?: readonly FaultName[] } = {},
): Promise<VerifyResult> {
  const validation = new Validation(golden, file, PROFILES.strict);
  const traces = [];
  let line = 0;
  for (const goldenCase of golden.cases) {
    const run = await runGoldenCase(goldenCase, options.faults ?? []);
    for (const output of run.lines) {
      line += 1;
      validation.addLine(output, `reference:${line}`, line);
    }
    traces.push({ file: `reference trace of ${goldenCase.name}`, trace: run.trace, goldenCase });
  }
  const report = await validation.finish("reference engine", traces);
  const drift: MarginDrift[] = [];
  const oracle = await goldenOracle(golden.cases[0], validation.epsilon);
  for (const goldenCase of golden.cases) {
    for (const request of goldenCase.expected.requests) {
      const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
      const reference = await oracle.targetOver(
        [...prompt, ...request.tokens],
        requestSampling(goldenCase.case, request.id),
      );
      request.margins.forEach((stored, index) => {
        const recomputed = reference.predictions[prompt.length - 1 + index].margin;
        if (Math.abs(recomputed - stored) >= golden.epsilon.target)
          drift.push({ case: goldenCase.name, request: request.id, index, stored, recomputed });
      });
    }
  }
  return { file, suite: golden.suite, report, drift, ok: report.exitCode === 0 && drift.length === 0 };
}
