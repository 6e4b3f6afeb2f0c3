// Law "acceptance correctness": accept_len - 1 equals the depth of the deepest draft node whose path
// tokens each equal the reference target argmax at their parent. Catches under- and over-acceptance.
// Works on trees: verify rows carry their parent (absent: a chain, each row's parent is the previous).
// For a request with sampling options the argmax is the processed logits' (verification compares drafts
// with it), each position processed with the tokens before it committed. Requests that sample are judged by
// the sampling replay law instead.
import type { Case } from "../case/case.ts";
import { isStochasticRequest, requestSampling } from "../sampling/params.ts";
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import { readRounds, sequenceOf } from "./rounds.ts";
import type { Law } from "./definition.ts";

export const ACCEPTANCE_CORRECTNESS = "acceptance correctness";

export async function checkAcceptanceCorrectness(
  trace: Trace,
  oracle: ReferenceOracle,
  testCase?: Readonly<Case>,
): Promise<LawResult> {
  const rounds = readRounds(trace);
  if (rounds.length === 0) return notCheckable(ACCEPTANCE_CORRECTNESS, "the trace has no verify events with results");
  const tally = new LawTally(ACCEPTANCE_CORRECTNESS);
  await oracle.prepareRequests(trace.requests);
  for (const round of rounds) {
    const sequence = sequenceOf(trace, round.request);
    const rows = round.verifyRows;
    // Stochastic requests accept by rejection sampling: law "sampling replay" judges their rounds.
    if (!sequence || rows.length === 0 || (testCase && isStochasticRequest(testCase, round.request))) continue;
    const reference = await oracle.targetOver(sequence, testCase && requestSampling(testCase, round.request));
    const rootPosition = rows[0].position;
    const parentOf = (node: number) => rows[node].parent ?? node - 1;
    const blockStart = round.result.acceptIndex[0]; // the root's flattened index, r * N
    const enginePath = round.result.acceptIndex.slice(0, round.result.acceptLen).map((index) => index - blockStart);
    tally.checked += 1;
    // Walk both paths together from the root; the reference takes the child carrying its argmax.
    let node = 0;
    for (let depth = 0; ; depth++) {
      const position = rootPosition + depth;
      if (position >= reference.predictions.length) break; // the request was cut: nothing verified beyond
      const prediction = reference.predictions[position];
      const referenceNext = rows.findIndex(
        (row, index) => index > 0 && parentOf(index) === node && row.token === prediction.argmax,
      );
      const engineNext = depth + 1 < enginePath.length ? enginePath[depth + 1] : -1;
      if (referenceNext === engineNext) {
        if (engineNext < 0) break;
        node = engineNext;
        continue;
      }
      if (prediction.margin < oracle.epsilon) {
        tally.ties += 1;
        break;
      }
      const kind =
        engineNext >= 0 && referenceNext < 0
          ? "over-accepted"
          : engineNext < 0
            ? "under-accepted"
            : "accepted the wrong child";
      tally.fail({
        message: `request ${round.request}, verify event ${round.event}: ${kind} at depth ${depth + 1}: accept_len ${round.result.acceptLen}, the reference target's argmax after node ${node} is ${prediction.argmax} (margin ${prediction.margin})`,
        request: round.request,
        event: round.event,
        expected: referenceNext,
        got: engineNext,
        margin: prediction.margin,
      });
      break;
    }
  }
  return tally.result();
}

export const law: Law = {
  name: ACCEPTANCE_CORRECTNESS,
  summary: "accept_len - 1 is the depth the reference target accepts",
  appliesTo: (testCase) => testCase.engine.mode === "speculative",
  needs: { oracle: true },
  check: ({ testCase, run, oracle }) => checkAcceptanceCorrectness(run.trace, oracle, testCase),
};
