// Law "acceptance correctness": accept_len - 1 equals the depth of the deepest draft node whose path
// tokens each equal the reference target argmax at their parent. Catches under- and over-acceptance.
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "./oracle.ts";
import { readRounds, sequenceOf } from "./rounds.ts";

export const ACCEPTANCE_CORRECTNESS = "acceptance correctness";

export async function checkAcceptanceCorrectness(trace: Trace, oracle: ReferenceOracle): Promise<LawResult> {
  const rounds = readRounds(trace);
  if (rounds.length === 0) return notCheckable(ACCEPTANCE_CORRECTNESS, "the trace has no verify events with results");
  const tally = new LawTally(ACCEPTANCE_CORRECTNESS);
  for (const round of rounds) {
    const sequence = sequenceOf(trace, round.request);
    if (!sequence || round.verifyRows.length === 0) continue;
    const reference = await oracle.targetOver(sequence);
    const rootPosition = round.verifyRows[0].position;
    const drafts = round.verifyRows.slice(1).map((row) => row.token);
    // Walk the chain with the reference: node m + 1 is acceptable iff it equals the argmax after node m.
    let depth = 0;
    let tie = false;
    let exhausted = false;
    while (depth < drafts.length) {
      const parentPosition = rootPosition + depth;
      if (parentPosition >= reference.predictions.length) {
        exhausted = true; // the request was cut: nothing verified beyond here
        break;
      }
      const prediction = reference.predictions[parentPosition];
      const matches = drafts[depth] === prediction.argmax;
      const engineAccepted = depth < round.result.acceptLen - 1;
      if (matches !== engineAccepted && prediction.margin < oracle.epsilon) {
        tie = true;
        break;
      }
      if (!matches) break;
      depth++;
    }
    tally.checked += 1;
    if (tie) {
      tally.ties += 1;
      continue;
    }
    const engineDepth = round.result.acceptLen - 1;
    if (exhausted ? depth > engineDepth : depth !== engineDepth) {
      const kind = engineDepth > depth ? "over-accepted" : "under-accepted";
      tally.fail({
        message: `request ${round.request}, verify event ${round.event}: ${kind}: accept_len ${round.result.acceptLen}, reference accepts ${depth} drafts`,
        request: round.request,
        event: round.event,
        expected: depth + 1,
        got: round.result.acceptLen,
      });
    }
  }
  return tally.result();
}
