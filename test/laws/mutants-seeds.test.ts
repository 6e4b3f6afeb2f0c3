// Issue 25: every named fault is killed at every seed, not only at the seed the kills file was made with. At
// seed 1, stale-padding-slot survived `specconf mutants` (its corner: a request finishing while a later one in
// a padded batch goes on with varying accepted lengths). Its property now reaches that corner often enough that
// the runs `mutants` gives it in one round (its --max-runs 400 over every property) kill it at seeds 1..5. CI
// time: at most 5 x 12 runs of one property, shrinking off. The other faults' kills across seeds are measured
// by `specconf mutants --json --seed N` (README Benchmarks).
import { describe, expect, it } from "vitest";
import { LAW_PROPERTIES, propertyFor } from "../../src/properties/law-properties.ts";
import { runLawProperty } from "../../src/properties/law-property.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { PADDING_POISON_INVARIANCE } from "../../src/laws/padding-poison-invariance.ts";
import { CONTEXT_LIMIT } from "../../src/laws/context-limit.ts";
import { SLOT_HISTORY } from "../../src/laws/slot-history.ts";
import { STOP_STRING_END } from "../../src/laws/stop-string-end.ts";
import { STOP_TRIM } from "../../src/laws/stop-trim.ts";
import { STREAM_DELTAS } from "../../src/laws/stream-deltas.ts";

/** The runs `mutants` gives each property in its first round at its default --max-runs (cli/mutants.ts). */
const RUNS_PER_PROPERTY = Math.max(1, Math.min(20, Math.floor(400 / (LAW_PROPERTIES.length + 1))));

/** The fault's property run fails within `numRuns` at `seed` (shrinking off: only the kill is asserted). */
async function expectKilled(law: string, fault: FaultName, numRuns: number, seed: number): Promise<void> {
  const run = await runLawProperty(propertyFor(law)!, {
    numRuns,
    seed,
    faults: [fault],
    shrinkSeconds: 0,
    failureDir: false,
  });
  expect(run.error).toBeUndefined();
  expect(run.failure, `survived ${run.runs} runs at seed ${seed}`).toBeDefined();
}

describe("stale-padding-slot is killed at every seed", () => {
  for (const seed of [1, 2, 3, 4, 5])
    it(`seed ${seed}: padding-poison invariance's property fails within ${RUNS_PER_PROPERTY} runs`, async () => {
      await expectKilled(PADDING_POISON_INVARIANCE, "stale-padding-slot", RUNS_PER_PROPERTY, seed);
    }, 300_000);
});

// Issue 28: a fault of a dimension only some spaces draw is hunted with those properties alone
// (properties/dimensions.ts), each getting `mutants`' full batch of 20 runs in its first round.
describe("the context boundary's fault is killed at every seed", () => {
  for (const seed of [1, 2, 3, 4, 5])
    it(`seed ${seed}: lookahead-past-limit fails the context limit property within 20 runs`, async () => {
      await expectKilled(CONTEXT_LIMIT, "lookahead-past-limit", 20, seed);
    }, 300_000);
});

describe("the slot history's fault is killed at every seed", () => {
  for (const seed of [1, 2, 3, 4, 5])
    it(`seed ${seed}: drafter-state-kept-on-slot-reuse fails the slot history property within 20 runs`, async () => {
      await expectKilled(SLOT_HISTORY, "drafter-state-kept-on-slot-reuse", 20, seed);
    }, 300_000);
});

describe("the text layer's faults are killed at every seed", () => {
  for (const fault of [
    "stop-string-checked-at-round-end",
    "stream-delta-last-token",
    "usage-counts-verified-run",
  ] as const)
    for (const seed of [1, 2, 3, 4, 5])
      it(`seed ${seed}: ${fault} fails the stop string end property within 20 runs`, async () => {
        await expectKilled(STOP_STRING_END, fault, 20, seed);
      }, 300_000);
});

// Issue 34 (item 7): corners a law guards, drawn independently in about 1% of cases, are weighted so that a planted
// bug in each is caught within `check --runs 30`: two stop strings one token completes (stop trim's space) and an
// abort while the stream holds text back (stream deltas' space). Measured at seeds 1-10 (scripts/corner-rates.ts):
// runs 3-29 and 2-10.
describe("issue 34's weighted corners are caught within 30 runs at every seed", () => {
  for (const [fault, law] of [
    ["stop-strings-by-list-order", STOP_TRIM],
    ["held-text-dropped-on-abort", STREAM_DELTAS],
  ] as const)
    for (const seed of [1, 2, 3, 4, 5])
      it(`seed ${seed}: ${fault} fails the ${law} property within 30 runs`, async () => {
        await expectKilled(law, fault, 30, seed);
      }, 300_000);
});
