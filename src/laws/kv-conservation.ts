// Law "KV conservation": every pool passes checkIntegrity() after every step, holds no temporary slot
// between steps and nothing for finished requests, and is empty once every request is done.
import type { PoolCheck } from "../engine/engine.ts";
import { LawTally, type LawResult } from "./law.ts";

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
