// Stochastic sampling in the engine: a request with temperature > 0 draws its tokens from the target's
// processed distribution (src/sampling/stochastic.ts), one uniform from its own stream per decision, and every
// decision is recorded on the row whose distribution it used. Plain rows (the prefill's last row, a target-only
// decode row) draw the next token. Verification is rejection sampling over the draft tree (SpecInfer-style
// recursive rejection; a chain is a tree of width 1): at an accepted node, its children are tested in row
// order, each accepted with probability min(1, r(d) / q(d)) where r starts as the node's distribution p and
// becomes norm(max(r - q, 0)) after each rejection; the first child accepted is the next node; when every
// child is rejected the recovered token is drawn from r, and a node without children draws the bonus from p.
// The drafter is greedy, so q is one-hot at the drafted token (vLLM's draft_probs None, SGLang's
// tree_speculative_sampling_target_only): the walk emits tokens exactly distributed as p, however good
// the draft. Two faults live here: temperature-applied-twice and recovery-from-target.
import {
  acceptTest,
  distributionOf,
  drawToken,
  oneHot,
  residualOf,
  type Distribution,
} from "../sampling/stochastic.ts";
import type { SamplingDraw } from "../trace/schema.ts";
import type { Faults } from "../case/faults.ts";
import type { Request } from "./request.ts";
import type { SampledRow } from "./row-sampler.ts";
import type { DraftTree } from "./phases/verify.ts";

/** The distribution a target row of a stochastic request samples from. */
export function rowDistribution(request: Request, sampled: SampledRow | undefined, verify: boolean, faults: Faults) {
  if (!sampled?.row) throw new Error(`request ${request.id}: a stochastic row without its logits`);
  return distributionOf(sampled.row, request.sampling, {
    // vLLM issue 42744: the processors (min-p with penalties, bias and min tokens) skipped at verified positions.
    minP: sampled.processing,
    // vllm-ascend PR 6685: probabilities passed where logits were expected, so the rejection sampler divides by
    // the temperature a second time.
    temperatureTimes: verify && faults.has("temperature-applied-twice") ? 2 : 1,
  });
}

/** The record of a decision: margins are omitted where no boundary can be crossed (JSON has no Infinity). */
function draw(fields: Omit<SamplingDraw, "margin">, margin: number, cutMargin: number): SamplingDraw {
  const nearest = Math.min(margin, cutMargin);
  return { ...fields, ...(Number.isFinite(nearest) ? { margin: nearest } : {}) };
}

/** Draws a plain row's token with the request's next uniform. Mutates the stream. */
export function drawNext(distribution: Distribution, request: Request): { token: number; record: SamplingDraw } {
  const uniform = request.stream!.next();
  const { token, margin } = drawToken(distribution.probs, uniform, distribution.temperature);
  return { token, record: draw({ uniform, token }, margin, distribution.cutMargin) };
}

export interface RejectionWalk {
  /** Accepted path, root first (node indices). */
  path: number[];
  /** The token drawn at the path's last node: recovered after a rejection, or the bonus. */
  finalToken: number;
  /** Decisions per node (only path nodes decide). */
  draws: Map<number, SamplingDraw[]>;
}

/** Rejection sampling over one request's verify tree, `distributionAt(node)` its target rows. Mutates the stream. */
export function rejectionWalk(
  tree: DraftTree,
  distributionAt: (node: number) => Distribution,
  request: Request,
  faults: Faults,
): RejectionWalk {
  const path = [0];
  const draws = new Map<number, SamplingDraw[]>();
  for (;;) {
    const node = path[path.length - 1];
    const target = distributionAt(node);
    const records: SamplingDraw[] = [];
    draws.set(node, records);
    let residual: Float64Array = target.probs;
    let next = -1;
    const children = tree.parents.flatMap((parent, child) => (parent === node ? [child] : []));
    for (const child of children) {
      const proposal = oneHot(residual.length, tree.tokens[child]);
      const uniform = request.stream!.next();
      const test = acceptTest(residual, proposal, tree.tokens[child], uniform, target.temperature);
      records.push(draw({ uniform, child, accepted: test.accepted }, test.margin, target.cutMargin));
      if (test.accepted) {
        next = child;
        break;
      }
      residual = residualOf(residual, proposal);
    }
    if (next >= 0) {
      path.push(next);
      continue;
    }
    // vllm-ascend PR 2881 / 7808: the recovered token drawn from p itself, so a rejected draft can come back.
    const recoverFrom = children.length > 0 && faults.has("recovery-from-target") ? target.probs : residual;
    const uniform = request.stream!.next();
    const { token, margin } = drawToken(recoverFrom, uniform, target.temperature);
    records.push(draw({ uniform, token }, margin, target.cutMargin));
    return { path, finalToken: token, draws };
  }
}
