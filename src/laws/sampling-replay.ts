// Law "sampling replay": a stochastic request's every decision is the one the sampling rule dictates, given
// the uniforms its trace recorded and the cache-free distributions (the teacher-forced target's processed
// logits at each position of prompt ++ output, through temperature, min-p, top-k and top-p: stochastic.ts).
// A plain draw (the prefill's last row, a target-only decode row) emits the inverse-CDF token of its
// uniform. A verify round is rejection sampling walked from the root: at each accepted node its children are
// tested in row order, the child accepted exactly when u < min(1, r(d) / q(d)) (q one-hot at the drafted
// token: a greedy drafter's proposal; r the node's distribution, norm(max(r - q, 0)) after each rejection),
// and the node where every child was rejected (or that has none) emits the inverse-CDF token of r with its
// next uniform: the recovered token, or the bonus. Deterministic and shrinkable: the uniforms come from the
// request's seeded stream, so a shrunk case replays the same decisions. Tie-aware: a decision whose
// uniform lies within epsilon (logit units: probability distance times the temperature) of its boundary,
// or whose distribution has a top-k/top-p/min-p cut within epsilon, may go either way; the law counts
// the tie and follows the engine's choice (teacher-forced: the reference conditions on the engine's tokens).
// Catches the temperature applied twice, recovery from p instead of max(p - q, 0), and processors skipped
// at verified positions (vllm-ascend PRs 6685, 2881, 7808; vLLM issue 42744).
import { isStochastic, requestSampling, type RequestSampling } from "../sampling/params.ts";
import {
  acceptTest,
  distributionOf,
  drawToken,
  oneHot,
  residualOf,
  type Distribution,
} from "../sampling/stochastic.ts";
import type { Trace, TraceRow } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import { readRounds, sequenceOf, type Round } from "./rounds.ts";

export const SAMPLING_REPLAY = "sampling replay";

/** The reference distribution after each position of one request's sequence, built on demand. */
type DistributionAt = (position: number) => Distribution;

interface Replay {
  tally: LawTally;
  epsilon: number;
  request: number;
  sequence: readonly number[];
  distributionAt: DistributionAt;
}

/** A drawn token against the rule: the inverse CDF of `probs` at the uniform. */
function judgeDraw(
  replay: Replay,
  probs: ArrayLike<number>,
  distribution: Distribution,
  uniform: number,
  position: number,
  where: { event: number; what: string },
): void {
  const got = replay.sequence[position + 1];
  const expected = drawToken(probs, uniform, distribution.temperature);
  replay.tally.checked += 1;
  if (expected.token === got) return;
  const margin = Math.min(expected.margin, distribution.cutMargin);
  if (margin < replay.epsilon) {
    replay.tally.ties += 1;
    return;
  }
  replay.tally.fail({
    message: `request ${replay.request}, event ${where.event}: ${where.what} at position ${position + 1} is ${got}, the rule draws ${expected.token} with uniform ${uniform} (margin ${margin})`,
    request: replay.request,
    event: where.event,
    index: position + 1,
    expected: expected.token,
    got,
    margin,
  });
}

/** Replays one verify round's rejection walk; false when it failed (the rest of the request is not judged). */
function replayRound(replay: Replay, round: Round): boolean {
  const rows = round.verifyRows;
  const parentOf = (node: number) => rows[node].parent ?? node - 1;
  const blockStart = round.result.acceptIndex[0];
  const enginePath = round.result.acceptIndex.slice(0, round.result.acceptLen).map((index) => index - blockStart);
  const where = `request ${replay.request}, verify event ${round.event}`;
  let node = 0;
  for (let depth = 0; ; depth++) {
    const position = rows[node].position;
    // Past the output: the round was cut (EOS, a stop id, max new tokens) and nothing there was emitted.
    if (position + 1 >= replay.sequence.length) return true;
    const distribution = replay.distributionAt(position);
    const draws = rows[node].draws ?? [];
    const children = rows.flatMap((_, child) => (child > 0 && parentOf(child) === node ? [child] : []));
    let residual: Float64Array = distribution.probs;
    let taken = 0;
    let next = -1;
    for (const child of children) {
      const uniform = draws[taken++]?.uniform;
      if (uniform === undefined) {
        replay.tally.fail({
          message: `${where}: node ${node} records no uniform for testing child ${child}`,
          request: replay.request,
          event: round.event,
        });
        return false;
      }
      const token = rows[child].token;
      const proposal = oneHot(residual.length, token);
      const test = acceptTest(residual, proposal, token, uniform, distribution.temperature);
      const engineAccepted = enginePath[depth + 1] === child;
      replay.tally.checked += 1;
      if (test.accepted !== engineAccepted) {
        const margin = Math.min(test.margin, distribution.cutMargin);
        if (margin >= replay.epsilon) {
          replay.tally.fail({
            message: `${where}: child ${child} (token ${token}) at depth ${depth + 1} ${engineAccepted ? "accepted" : "rejected"}, the rule ${test.accepted ? "accepts" : "rejects"} it: uniform ${uniform}, accept probability ${Math.min(1, residual[token])} (margin ${margin})`,
            request: replay.request,
            event: round.event,
            index: position + 1,
            expected: test.accepted ? token : undefined,
            got: engineAccepted ? token : undefined,
            margin,
          });
          return false;
        }
        replay.tally.ties += 1;
      }
      if (engineAccepted) {
        next = child;
        break;
      }
      residual = residualOf(residual, proposal);
    }
    if (next >= 0) {
      node = next;
      continue;
    }
    if (enginePath.length > depth + 1) {
      replay.tally.fail({
        message: `${where}: the path goes on past node ${node} through node ${enginePath[depth + 1]}, which is not among its children`,
        request: replay.request,
        event: round.event,
      });
      return false;
    }
    const uniform = draws[taken]?.uniform;
    if (uniform === undefined) {
      replay.tally.fail({
        message: `${where}: node ${node} records no uniform for the ${children.length > 0 ? "recovered" : "bonus"} token`,
        request: replay.request,
        event: round.event,
      });
      return false;
    }
    const before = replay.tally.violation;
    judgeDraw(replay, residual, distribution, uniform, position, {
      event: round.event,
      what: children.length > 0 ? "the recovered token" : "the bonus token",
    });
    return replay.tally.violation === before;
  }
}

/** Replays every decision of one stochastic request in event order. */
function replayRequest(trace: Trace, replay: Replay, rounds: readonly Round[]): void {
  const roundsByEvent = new Map(rounds.map((round) => [round.event, round]));
  for (const event of trace.events) {
    const round = roundsByEvent.get(event.index);
    if (round) {
      if (!replayRound(replay, round)) return;
      continue;
    }
    if (event.phase === "verify") continue;
    event.rows.forEach((row: TraceRow) => {
      const uniform = row.request === replay.request ? row.draws?.[0]?.uniform : undefined;
      if (uniform === undefined || row.position + 1 >= replay.sequence.length) return;
      const distribution = replay.distributionAt(row.position);
      judgeDraw(replay, distribution.probs, distribution, uniform, row.position, {
        event: event.index,
        what: `the ${event.phase} draw`,
      });
    });
  }
}

function stochasticRequests(sampled: (id: number) => RequestSampling | undefined, ids: readonly number[]) {
  return ids.filter((id) => isStochastic(sampled(id)?.params));
}

export async function checkSamplingReplay(
  trace: Trace,
  sampled: (id: number) => RequestSampling | undefined,
  oracle: ReferenceOracle,
): Promise<LawResult> {
  const tally = new LawTally(SAMPLING_REPLAY);
  const rounds = readRounds(trace);
  for (const id of stochasticRequests(
    sampled,
    (trace.requests ?? []).map((request) => request.id),
  )) {
    const sequence = sequenceOf(trace, id)!;
    const sampling = sampled(id)!;
    const reference = await oracle.processedOver(sequence, sampling);
    const memo = new Map<number, Distribution>();
    const distributionAt: DistributionAt = (position) => {
      let distribution = memo.get(position);
      if (!distribution) {
        distribution = distributionOf(reference.rows[position]!, sampling.params);
        memo.set(position, distribution);
      }
      return distribution;
    };
    replayRequest(
      trace,
      { tally, epsilon: oracle.epsilon, request: id, sequence, distributionAt },
      rounds.filter((round) => round.request === id),
    );
  }
  return tally.result();
}

export const law: Law = {
  name: SAMPLING_REPLAY,
  summary:
    "every stochastic decision (draw, accept/reject, recovered and bonus token) is the rule's, given the recorded uniforms and cache-free distributions",
  appliesTo: (testCase) => testCase.workload.requests.some((request) => isStochastic(request.sampling)),
  needs: { oracle: true },
  unavailable: ({ run }) =>
    run.trace.events.some((event) => event.rows.some((row) => row.draws !== undefined))
      ? undefined
      : "the trace records no sampling draws (uniforms)",
  check: ({ testCase, run, oracle }) => checkSamplingReplay(run.trace, (id) => requestSampling(testCase, id), oracle),
};
