// The one engine interface: run(case) -> { outputs, trace }. Replay, golden suites and the external
// adapter all go through it; createEngine is the engine runCase steps, for suites that step it themselves
// (the model-based suite). Run results are engine-neutral (trace/run-result.ts) and read off the stepped
// engine in engine/run-result.ts; a case's models live in
// case/models.ts, the session cache in runtime/sessions.ts, the consistency checks in case/consistency.ts.
import type { Case } from "../case/case.ts";
import { checkCaseConsistency } from "../case/consistency.ts";
import { stepBound } from "../case/limits.ts";
import { loadModels, resolveModelSpec, type LoadedModels } from "../case/models.ts";
import { buildDraft } from "../model/build.ts";
import { CrashedRun, type RunResult } from "../trace/run-result.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { engineSessions } from "./case-sessions.ts";
import { runResult } from "./run-result.ts";
import { Engine, type EngineOptions } from "./step-loop.ts";
import type { ForwardMemo } from "./forward-memo.ts";

export interface RunOptions {
  /** Record the trace (default true). */
  trace?: boolean;
  /** Per-step pool integrity checks (default: on when tracing). Off, only the end-of-run leak count remains. */
  checkPools?: boolean;
  /**
   * Safety net against a scheduling bug: a run that needs more steps is reported, not looped forever.
   * Default: the case's step bound (src/case/limits.ts), which no correct run reaches.
   */
  maxSteps?: number;
  onStep?: (step: number, engine: Engine) => void;
  /**
   * Shared by the runs of one case (the law runner's run, baseline and twins): a forward whose inputs
   * exactly repeat an earlier one's returns its outputs without running (forward-memo.ts). Bit-identical.
   */
  forwardMemo?: ForwardMemo;
}

/**
 * The models as the engine loads them: the case's, except under the draft-rope-unscaled fault, whose draft is
 * built from the target's config without its rope_scaling (vllm-project/speculators issue 574, kekzl/imp issue
 * 897): the same weights rotating at other frequencies, so acceptance decays with position, output lossless.
 */
function engineModels(testCase: Case, models: LoadedModels): LoadedModels {
  if (!testCase.engine.faults.includes("draft-rope-unscaled") || !models.draft || !testCase.draft) return models;
  const { ropeScaling: _dropped, ...unscaled } = models.spec;
  const numModules = models.draft.graphs.length;
  return { ...models, draft: buildDraft({ ...models.target, spec: unscaled }, testCase.draft, numModules) };
}

/**
 * The reference engine for a case, as runCase steps it: models loaded, sessions (cached), the drafter the
 * case's draft kind implies. The caller steps it and releases it.
 */
export async function createEngine(
  testCase: Case,
  options: Omit<EngineOptions, "drafter">,
): Promise<{ engine: Engine; models: LoadedModels }> {
  const models = engineModels(testCase, loadModels(testCase));
  const sessions = await engineSessions(testCase, models);
  const drafter = testCase.draft?.kind === "ngram" ? "ngram" : "model";
  return { engine: new Engine(testCase.engine, models.spec, sessions, { ...options, drafter }), models };
}

export async function runCase(testCase: Case, options: RunOptions = {}): Promise<RunResult> {
  // Consistency first: a bad case gets its JSON path, not an error from deep inside model building.
  checkCaseConsistency(testCase, resolveModelSpec(testCase.model));
  const { engine, models } = await createEngine(testCase, {
    trace: options.trace ?? true,
    checkPools: options.checkPools ?? options.trace ?? true,
    forwardMemo: options.forwardMemo,
    betweenForwards: (self, step, forwardInStep, endOfStep) => {
      // A point past the step's last forward lands after the step (the case schema's contract).
      const lands = (point: { step: number; beforeForward: number }) =>
        point.step === step &&
        (endOfStep ? point.beforeForward >= forwardInStep : point.beforeForward === forwardInStep);
      for (const abort of testCase.workload.aborts) if (lands(abort)) self.abort(abort.request);
      for (const retract of testCase.workload.retracts ?? []) if (lands(retract)) self.retract(retract.request);
    },
  });
  const draftGraphs = testCase.engine.mode === "speculative" ? (models.draft?.graphs ?? []) : [];
  try {
    return await runEngine(testCase, engine, models, draftGraphs, options);
  } catch (error) {
    // Bad input is not a crash; a crash keeps what the per-step pool checks saw before it.
    if (error instanceof BadInputError) throw error;
    throw new CrashedRun(error, { poolChecks: [...engine.poolChecks], steps: engine.step });
  } finally {
    engine.release();
  }
}

/** Steps the engine until the workload is done; the outputs and the trace. */
async function runEngine(
  testCase: Case,
  engine: Engine,
  models: LoadedModels,
  draftGraphs: readonly { digest: string }[],
  options: RunOptions,
): Promise<RunResult> {
  for (const request of testCase.workload.requests) engine.addRequest(request);
  const lastAbortStep = Math.max(
    0,
    ...[...testCase.workload.aborts, ...(testCase.workload.retracts ?? [])].map((event) => event.step),
  );
  const maxSteps = options.maxSteps ?? stepBound(testCase);
  while (engine.hasWork() || engine.step <= lastAbortStep) {
    if (engine.step >= maxSteps) throw new Error(`run did not finish within ${maxSteps} steps`);
    await engine.runStep();
    options.onStep?.(engine.step, engine);
  }
  engine.finish();
  return runResult(testCase, engine, models, draftGraphs);
}
