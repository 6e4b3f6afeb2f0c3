// The model-based suite (fc.commands, src/properties/commands/): add requests, step (with an abort or a
// retract armed before any forward), abort and retract between steps, against a simple model (each
// request's target-only greedy output), pool integrity and the trace laws checked after every command.
// A failure prints the seed and fast-check's path, and writes the equivalent case (arrivals, aborts and
// retracts where they landed) under .specconf/failures with its `npx specconf replay` line.
import fc from "fast-check";
import { expect, test } from "vitest";
import { runModelBased } from "../../../src/properties/commands/property.ts";
import { runsFromEnv, seedFor } from "../../helpers/vitest-law.ts";

const runs = 2 * runsFromEnv();
const seed = seedFor("model-based");

test(
  `model-based: add, step, abort, retract against target-only greedy outputs (${runs} runs, seed ${seed})`,
  { timeout: 600_000 },
  async () => {
    const run = await runModelBased({ seed, numRuns: runs });
    const { details } = run;
    console.log(
      `model-based: ${details.numRuns} runs, ${run.commands} commands, ${run.steps} steps, seed ${details.seed} (SPECCONF_SEED=${details.seed} replays)`,
    );
    if (!details.failed) {
      expect(run.steps, "the commands should drive the engine").toBeGreaterThan(runs);
      return;
    }
    expect.fail(
      [
        `model-based suite failed (seed ${details.seed}, path ${JSON.stringify(details.counterexamplePath)}): ${run.message}`,
        `  counterexample: ${fc.stringify(details.counterexample)}`,
        ...(run.replay ? [`  ${run.replay}`] : []),
      ].join("\n"),
    );
  },
);
