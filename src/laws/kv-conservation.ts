// Law "KV conservation": every pool passes checkIntegrity() after every step, holds no temporary slot
// between steps and nothing for finished requests, and is empty once every request is done.
import type { PoolCheck } from "../engine/engine.ts";
import type { EngineInternals } from "../engine/run-case.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, type LawResult } from "./law.ts";

export const KV_CONSERVATION = "KV conservation";

export function checkKvConservation(
  poolChecks: readonly PoolCheck[],
  steps: number,
  slotsInUseAtEnd: number,
): LawResult {
  const tally = new LawTally(KV_CONSERVATION);
  tally.checked = steps;
  const first = poolChecks[0];
  if (first) {
    const violation = first.violations[0];
    tally.fail({
      message: `after step ${first.step}, pool ${first.pool}: ${violation.message}`,
      request: violation.request,
    });
  }
  if (slotsInUseAtEnd > 0)
    tally.fail({ message: `${slotsInUseAtEnd} slots still in use after every request finished` });
  return tally.result();
}

const checkInternals = ({ poolChecks, steps, slotsInUseAtEnd }: EngineInternals) =>
  checkKvConservation(poolChecks, steps, slotsInUseAtEnd);

export const law: Law = {
  name: KV_CONSERVATION,
  summary: "pools pass checkIntegrity() after every step and are empty at the end",
  appliesTo: () => true,
  needs: { baseline: "also-check", internals: true },
  check: ({ run, baseline }) => {
    const own = checkInternals(run.internals!);
    return baseline?.internals ? combine(own, checkInternals(baseline.internals), "target-only run") : own;
  },
};
