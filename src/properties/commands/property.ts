// The model-based property: a config (tiny preset, any draft, S/K/N, chunk, page, budget, multi-layer,
// graph replay) and up to 14 commands, run against the simple model; then drain. Faults can be switched
// on to prove the suite can fail (test/properties/model-based.test.ts).
import fc from "fast-check";
import { CASE_FORMAT_VERSION, type Case } from "../../case/case.ts";
import type { FaultName } from "../../case/faults.ts";
import { writeFailure } from "../../failures/failure-file.ts";
import { draftArbitrary } from "../arbitraries/model.ts";
import { engineChoiceArbitrary, engineConfigOf } from "../arbitraries/engine.ts";
import { space } from "../arbitraries/space.ts";
import { AddRequest, commandsArbitrary, drain, type EngineModel } from "./commands.ts";
import { EngineSystem } from "./system.ts";

export function configArbitrary(faults: readonly FaultName[] = []): fc.Arbitrary<Case> {
  return fc
    .record({
      draft: draftArbitrary(["mirror", "noisy-mirror", "eagle", "tapped-mirror", "eagle3-mirror", "eagle3"]),
      engine: engineChoiceArbitrary(space({ steps: { min: 1, max: 4 } })),
    })
    .map(({ draft, engine }): Case => ({
      formatVersion: CASE_FORMAT_VERSION,
      model: { preset: "tiny" },
      draft,
      engine: engineConfigOf(engine, faults, draft.kind),
      workload: { requests: [], aborts: [] },
    }));
}

const firstRequest = fc
  .record({
    suffix: fc.array(fc.nat({ max: 4095 }), { minLength: 1, maxLength: 8 }),
    max: fc.integer({ min: 1, max: 8 }),
  })
  .map(({ suffix, max }) => new AddRequest(suffix, max));

export interface ModelBasedRun {
  details: fc.RunDetails<[Case, AddRequest, Iterable<fc.AsyncCommand<EngineModel, EngineSystem>>]>;
  /** Commands run and steps taken over every run (shrink attempts included). */
  commands: number;
  steps: number;
  message?: string;
  replay?: string;
}

export async function runModelBased(options: {
  seed: number;
  numRuns: number;
  faults?: readonly FaultName[];
  path?: string;
  failureDir?: string | false;
}): Promise<ModelBasedRun> {
  let last: EngineSystem | undefined;
  let lastFailing: EngineSystem | undefined;
  let commands = 0;
  let steps = 0;
  const details = await fc.check(
    fc.asyncProperty(
      configArbitrary(options.faults),
      firstRequest,
      commandsArbitrary(14),
      async (testCase, first, list) => {
        const real = await EngineSystem.create(testCase);
        last = real;
        const model: EngineModel = { requests: [], maxRequests: 3 };
        try {
          // Every run starts with a request, so the commands that follow have something to act on.
          await first.run(model, real);
          await fc.asyncModelRun(() => ({ model, real }), list);
          await drain(model, real);
        } catch (error) {
          lastFailing = real;
          throw error;
        } finally {
          commands += [...list].length;
          steps += real.engine.step;
        }
      },
    ),
    {
      seed: options.seed,
      numRuns: options.numRuns,
      ...(options.path ? { path: options.path, endOnFailure: true } : {}),
    },
  );
  const run: ModelBasedRun = { details, commands, steps };
  if (!details.failed) return run;
  const failing = lastFailing ?? last;
  run.message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  if (options.failureDir !== false && failing && failing.replayCase.workload.requests.length > 0) {
    const written = writeFailure(
      {
        property: "model-based",
        laws: ["model-based"],
        violation: { message: run.message },
        seed: details.seed,
        path: details.counterexamplePath ?? "",
        testCase: failing.replayCase,
        trace: failing.trace(),
      },
      options.failureDir,
    );
    run.replay = written.replay;
  }
  return run;
}
