// The laws run against an external engine: the case, its target-only baseline and the twin runs the
// multi-run laws need all go through the engine (protocol.ts); every registry law that can be judged from
// outputs and traces is applied (src/validate/trace-laws.ts), the rest are "not checkable". This is what
// `specconf check --engine "<command>"` runs per case.
import type { Case } from "../case/case.ts";
import { loadModels, type RunResult } from "../engine/run-case.ts";
import { applicableLaws, targetOnlyCase, twinCase } from "../laws/check-case.ts";
import { ReferenceOracle } from "../laws/oracle.ts";
import type { TwinKind } from "../laws/registry.ts";
import type { Trace } from "../trace/schema.ts";
import { PROFILES, RelaxationLog, type Profile } from "../validate/profiles.ts";
import { checkTraceLaws, runFromTrace, type TraceLawResult } from "../validate/trace-laws.ts";
import { ExternalEngineError, type EngineResult, type ExternalEngine, type RunOptions } from "./client.ts";

export interface ExternalCaseCheck {
  testCase: Case;
  /** One result per applicable law (not checkable where outputs and traces cannot tell). */
  results: TraceLawResult[];
  /** Set when the engine declared the case unsupported: no law was checked. */
  skipped?: string;
  relaxations: ReturnType<RelaxationLog["entries"]>;
}

/** A RunResult from what the engine returned; a missing trace becomes one with requests and no events. */
export function runFromEngine(testCase: Case, result: EngineResult): RunResult {
  const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt]));
  const trace: Trace = result.trace
    ? structuredClone(result.trace)
    : { formatVersion: 1, engine: { name: "external" }, events: [] };
  trace.requests ??= result.outputs.map((output) => ({
    id: output.id,
    prompt: prompts.get(output.id) ?? [],
    output: output.tokens,
    finishReason: output.finishReason ?? "length",
  }));
  const base = runFromTrace(trace);
  const outputs = result.outputs.map((output) => ({
    id: output.id,
    tokens: output.tokens,
    finishReason: output.finishReason ?? "length",
    acceptLens: output.acceptLens ?? base.outputs.find((candidate) => candidate.id === output.id)?.acceptLens ?? [],
    cutRounds: 0,
  }));
  return { ...base, outputs };
}

export async function checkExternalCase(
  engine: ExternalEngine,
  testCase: Case,
  options: RunOptions & { profile?: Profile } = {},
): Promise<ExternalCaseCheck> {
  const log = new RelaxationLog(options.profile ?? PROFILES.strict);
  let run: RunResult;
  try {
    run = runFromEngine(testCase, await engine.run(testCase, options));
  } catch (error) {
    if (error instanceof ExternalEngineError && error.kind === "unsupported")
      return { testCase, results: [], skipped: error.message, relaxations: log.entries() };
    throw error;
  }
  const laws = applicableLaws(testCase);
  const baselineCase = targetOnlyCase(testCase);
  const baseline = laws.some((law) => law.baseline)
    ? runFromEngine(baselineCase, await engine.run(baselineCase, options))
    : undefined;
  const twins = new Map<TwinKind, RunResult>();
  const twin = async (kind: TwinKind): Promise<RunResult> => {
    let result = twins.get(kind);
    if (!result) {
      const twinTestCase = twinCase(kind, testCase);
      result = runFromEngine(twinTestCase, await engine.run(twinTestCase, options));
      twins.set(kind, result);
    }
    return result;
  };
  const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  const results = await checkTraceLaws({ testCase, run, baseline, twin, oracle, log });
  return { testCase, results, relaxations: log.entries() };
}
