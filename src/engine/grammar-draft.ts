// The grammar's mask in drafting: a draft row of a request with a grammar ranks its candidates over the full
// draft logits with the tokens its mask state disallows after every allowed one (vllm#48197's bitmask per
// draft position; drafts the grammar rejects are wasted verify rows). Disallowed tokens keep a finite
// rank value (their logit minus DISALLOWED_PENALTY), so a row still expands into topk children with finite
// cumulative scores (the trace carries them as JSON numbers) when fewer than topk tokens are allowed, and
// those children rank below every allowed path. Log-probabilities are normalized over the allowed tokens.
// Drafts over the target's vocabulary only: an EAGLE-3 draft ranks its own draft vocabulary (the draft
// vocabulary law judges those ids as the d2t image of the draft's argmax) and multi-layer modules take
// their argmax; their drafts are unmasked and verify, which masks every target row, rejects what the
// grammar does not allow.
import type { ForwardResult } from "../runtime/ort.ts";
import type { EngineContext } from "./context.ts";
import type { Request } from "./request.ts";
import { isAllowed, nextState, type Grammar } from "../sampling/grammar.ts";
import { logSumExp, topTokens } from "../sampling/process-logits.ts";
import type { TopK } from "./topk.ts";

/** Subtracted from a disallowed token's logit: below any allowed token of any preset (mirror logits are x 2^16). */
export const DISALLOWED_PENALTY = 1e9;

/** The row's rank values: logits, the disallowed ones lowered by DISALLOWED_PENALTY. Pure. */
export function maskedRankValues(
  logits: ArrayLike<number>,
  row: number,
  vocab: number,
  grammar: Grammar,
  state: number,
  eosId: number,
): { values: Float64Array; allowed: Float64Array } {
  const values = new Float64Array(vocab);
  const allowed = new Float64Array(vocab);
  for (let token = 0; token < vocab; token++) {
    const logit = logits[row * vocab + token];
    const ok = isAllowed(grammar, state, token, eosId);
    values[token] = ok ? logit : logit - DISALLOWED_PENALTY;
    allowed[token] = ok ? logit : -Infinity;
  }
  return { values, allowed };
}

/** The draft row's topk candidates under the mask, with log-softmax over the allowed tokens. Pure. */
export function maskedTopK(
  result: ForwardResult,
  row: number,
  k: number,
  vocab: number,
  grammar: Grammar,
  state: number,
  eosId: number,
): TopK {
  if (!result.logits) throw new Error("a masked draft row needs the forward's full logits");
  const { values, allowed } = maskedRankValues(result.logits, row, vocab, grammar, state, eosId);
  const normalizer = logSumExp(allowed);
  const ranked = topTokens(values, Math.min(k + 1, vocab));
  const tokens = ranked.slice(0, k);
  const logprobs = tokens.map((token) => values[token] - normalizer);
  if (ranked.length > k) return { tokens, logprobs, cutMargin: values[ranked[k - 1]] - values[ranked[k]] };
  return { tokens, logprobs };
}

/**
 * The mask state of a draft row of `request` whose draft path is `pathTokens` (empty: the row yielding the
 * round's root candidates); undefined when the request has no grammar or the draft ranks its own vocabulary.
 */
export function draftRowMask(
  context: EngineContext,
  request: Request,
  pathTokens: readonly number[],
): number | undefined {
  if (context.sessions.eagle3 !== undefined) return undefined;
  return request.draftMaskState(pathTokens);
}

/** A draft row's topk: masked when the row was planned with a mask state, else the graph's own top-K. */
export function draftTopK(
  context: EngineContext,
  request: Request,
  result: ForwardResult,
  row: number,
  k: number,
  maskState: number | undefined,
  rawTopK: (result: ForwardResult, row: number, k: number) => TopK,
): TopK {
  if (maskState === undefined || !request.grammar) return rawTopK(result, row, k);
  return maskedTopK(result, row, k, context.spec.vocab, request.grammar.grammar, maskState, context.spec.eosId);
}

/**
 * Prompt lookup's proposal cut before the first draft the grammar does not allow (vLLM validates n-gram drafts
 * against the grammar the same way): the mask of a drafter that has no logits. Unchanged without a grammar.
 */
export function grammarPrefix(request: Request, drafts: readonly number[], eosId: number): number[] {
  const matcher = request.grammar;
  let state = request.draftMaskState([]);
  if (!matcher || state === undefined) return [...drafts];
  const kept: number[] = [];
  for (const token of drafts) {
    if (!isAllowed(matcher.grammar, state, token, eosId)) break;
    kept.push(token);
    state = nextState(matcher.grammar, state, token);
  }
  return kept;
}
