// Law "draft reference": each round's draft tokens, and their logits within tolerance, equal a
// cache-free recomputation of the draft over the verified sequence (target hidden states recomputed
// too). With the EAGLE head and the tapped mirror this catches hidden-state plumbing bugs.
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "./oracle.ts";
import { readRounds, sequenceOf } from "./rounds.ts";

export const DRAFT_REFERENCE = "draft reference";

/** Relative logit tolerance on top of the absolute epsilon: float32 accumulates rounding with depth. */
function relativeTolerance(oracle: ReferenceOracle): number {
  return oracle.spec.dtype === "float32" ? 1e-5 : 1e-12;
}

export async function checkDraftReference(trace: Trace, oracle: ReferenceOracle): Promise<LawResult> {
  if (!oracle.hasDraft) return notCheckable(DRAFT_REFERENCE, "no draft model");
  const rounds = readRounds(trace).filter((round) => round.draftRows.length > 0);
  if (rounds.length === 0) return notCheckable(DRAFT_REFERENCE, "the trace has no verify rounds with draft events");
  const tally = new LawTally(DRAFT_REFERENCE);
  for (const round of rounds) {
    const sequence = sequenceOf(trace, round.request);
    if (!sequence) continue;
    const rootPosition = round.verifyRows[0].position;
    const drafts = round.verifyRows.slice(1).map((row) => row.token);
    const recomputed = await oracle.draftChain(sequence, rootPosition, drafts);
    tally.checked += 1;
    for (let step = 0; step < drafts.length; step++) {
      const expected = recomputed[step];
      const source = round.draftRows[step];
      if (drafts[step] !== expected.argmax) {
        if (expected.margin < oracle.draftEpsilon) {
          tally.ties += 1;
          break;
        }
        tally.fail({
          message: `request ${round.request}, round at verify event ${round.event}: draft ${step + 1} is ${drafts[step]}, the cache-free draft gives ${expected.argmax} (draft margin ${expected.margin})`,
          request: round.request,
          event: source?.event ?? round.event,
          index: step,
          expected: expected.argmax,
          got: drafts[step],
          margin: expected.margin,
        });
        break;
      }
      const logit = source?.data.topLogit;
      if (logit === undefined) continue;
      const tolerance = oracle.draftEpsilon + relativeTolerance(oracle) * Math.abs(expected.topLogit);
      if (Math.abs(logit - expected.topLogit) > tolerance) {
        tally.fail({
          message: `request ${round.request}, draft ${step + 1} (event ${source.event} row ${source.row}): logit ${logit} differs from the cache-free draft's ${expected.topLogit} by more than ${tolerance}`,
          request: round.request,
          event: source.event,
          index: step,
        });
        break;
      }
    }
  }
  return tally.result();
}
