// Named faults, off by default. Each reproduces one real bug class (docs/design.md section 6) and must make a
// law fail without crashing the engine: a crash proves nothing.
export const FAULT_NAMES = [
  /** sglang PR 26800: a non-final chunk's last draft-extend row pairs h_{b-1} with the token sampled from the chunk's last logits instead of x_b. */
  "chunked-tail-token",
  /** sglang PR 25015: draft decode runs one position past the draft KV it extends. */
  "draft-position-early-increment",
  /** sglang PR 24859: draft extend after verify reuses the draft-phase hidden buffer ([bs, H]) padded or truncated to sum(accept_len) rows. */
  "phase-confusion",
  /** Rejected verify slots are never freed. */
  "leaked-rejected-slots",
  /** A packed batch's mask lets a row attend one slot of the next request's context. */
  "cross-request-mask-leak",
  /** sglang PR 22954: in multi-layer drafting, steps after the first keep module 0's pool on the forward. */
  "shared-draft-pool",
  /** sglang PRs 15360/26866: the bonus is read from accept_tokens with stride N instead of S + 1. */
  "bonus-stride",
  /** Graph capture advances the real batch's positions in place and never restores them. */
  "positions-not-restored-after-capture",
  /** Resume after a retract skips the draft pools: the draft KV and pending draft are stale. */
  "stale-draft-kv-after-retract",
  /**
   * Issue 25 (the class of an abort lost between the API and the scheduler): an abort of a request that is
   * decoding is dropped without a trace; the request runs to completion and the lifecycle never mentions it.
   */
  "abort-dropped-while-decoding",
  /**
   * Issue 25, the same for a retract (preemption requested, never carried out): the request keeps its KV and
   * goes on decoding; outputs are unchanged, so only the schedule shows it.
   */
  "retract-dropped-while-decoding",
  /**
   * Issue 25 (seen on a third-party trace: draft anchors 0-8 written, a row at 10 attending [0, 9]): the draft
   * extend after verify skips its first anchor's row; the position's slot is allocated, never written, and the
   * later rows attend it as persisted KV.
   */
  "skipped-draft-position",
  /**
   * Issue 25 (standalone drafts): a draft-model path feeds the draft its tokens at their own positions (anchor +
   * 1, as vLLM's draft-model proposer beside EAGLE's, PR 24322, and llama.cpp's draft context do), and adding that
   * shift where the model already makes it runs every draft-decode query one position late. Slots, attended KV
   * and the recorded anchors stay right, so positions cannot see it; lossless holds; only the draft's own
   * predictions move (draft reference from the tokens alone; mirror acceptance only where an argmax flips).
   */
  "draft-model-position-shifted",
  /**
   * vLLM PR 46899 (overlap): a retract discards the request's in-flight round, but the placeholder standing
   * for its unprocessed token stays in the token list; after the gap it is fed to the model as a token.
   */
  "stale-placeholder-after-gap",
  /**
   * sglang-jax issue 1487 (overlap): the future-token ring is sized for the batch running when it was created
   * and wraps without checking: a later producer's write replaces a token still pending for another request.
   */
  "future-ring-wrap",
  /**
   * SGLang PRs 19897/19796 (prefix cache): a prefix hit shares the cached pages, but their draft KV was never
   * written (it holds what a fresh buffer holds).
   */
  "prefix-hit-uninitialized-draft-kv",
  /**
   * SGLang PR 10846 (prefix cache, page > 1): the draft pools reuse the unaligned match length, sharing the
   * partially matched last page, and the draft extend continues inside that shared page.
   */
  "prefix-draft-kv-unaligned",
  /**
   * SGLang PR 26880 (padded graph replay): the padding rows' KV entries are laid out from an offset computed
   * with the unpadded seq_lens_sum, over the tail of the real rows' entries.
   */
  "padded-seq-lens-sum",
  /**
   * SGLang PR 22958 (padded graph replay): padding rows keep the stale write-slot indices of an earlier, larger
   * batch in the shared static buffer, and their poison K/V lands in those slots. Why its kill at `specconf mutants`'
   * default seed 1 needs 3 requests and 20 prompt tokens (issue 34's bound is 2 / 12): it is found there by the
   * padding property (3 requests finishing apart), and the padding rows must keep a slot of an earlier, larger batch
   * that a request still running holds: one request finishes while two go on in a smaller bucket. Its shrunk case
   * (S = 2, prompts of 8, 6 and 6 tokens: the 5-token preamble plus 3, 1 and 1) passes every law with any one of its
   * requests removed (measured; shrinking tries each removal: arbitraries/removable-array.ts, shrinkTo). At other
   * seeds a one-request case shows it (the kills file: 1 request, 6 tokens).
   */
  "stale-padding-slot",
  /**
   * vLLM issue 39273 / PR 52942 (variable-length drafts): a request that proposed no draft skips the accept
   * kernel, and its bonus is read from the persistent accept buffer's stale row.
   */
  "zero-draft-stale-row",
  /** Tree drafting: the next frontier is the K children with the best own log-probability, not the best cumulative one along the path. */
  "frontier-by-own-logprob",
  /** sglang issue 31599 (PRs 31569, 33758): an accepted run reaching the cap ends as "length" before stop tokens are checked, keeping tokens past the stop. */
  "length-before-stop",
  /** sglang PR 33643: the penalizer counts one token per step (the round's last) instead of every accepted token. */
  "penalties-per-step",
  /** vLLM issue 42744 (PR 42802): logits processing (penalties, bias, min tokens; min-p when sampling) applied to the bonus position only, verified drafts judged on the raw logits. */
  "processing-bonus-only",
  /** vLLM issue 34497 (PR 31082), llama.cpp issue 27972: logprobs of accepted draft tokens reported as 0.0. */
  "speculated-logprobs-zero",
  /** sglang PR 33643: min new tokens counted in steps, not tokens, so EOS and the stop ids stay masked too long. */
  "min-tokens-per-step",
  /** vllm-ascend PR 6685: the rejection sampler receives probabilities where it expects logits, so the temperature divides twice. */
  "temperature-applied-twice",
  /** vllm-ascend PRs 2881/7808: after a rejection the recovered token is drawn from p instead of norm(max(p - q, 0)). */
  "recovery-from-target",
  /** EAGLE-3 auxiliary id k read as the output of layer k (stream k + 1), not its input: SGLang's set_eagle3_layers_to_capture on explicit ids before sglang PR 25454 (it added 1; since then only when the first id is 1). */
  "eagle3-aux-layer-off-by-one",
  /** sglang PR 21272: the auxiliary states are never captured; the target's final hidden state is H wide, so the width check passes and fc is silently skipped. */
  "eagle3-fc-skipped",
  /** llama.cpp test_spec_checkpoint_sampler.py, vllm#44297: the grammar matcher is left where drafting advanced it (the whole draft chain) after verify rejected drafts. */
  "grammar-advanced-by-rejected-drafts",
  /** vllm#4592, sglang#24055: when speculation resumes, the draft extend covers the last round only, not the positions verified while it was off. */
  "draft-kv-not-caught-up",
  /** vLLM with a checkpoint lacking d2t (NeMo Automodel PR 2447): draft id d is drafted as target id d, the identity map. */
  "eagle3-d2t-missing",
  /** sglang issue 22679: the draft-extend path builds its attention metadata without the sliding window: windowed layers of the draft attend everything. */
  "window-missing-on-draft-extend",
  /**
   * transformers PR 47447, OpenVINO PR 37620 (sliding-window caches under speculation): a round with rejected
   * drafts rolls the request's window back to where the round started instead of to its accepted length, so
   * the next rows attend keys outside the window.
   */
  "window-rollback-to-round-start",
  /**
   * vllm-project/speculators issue 574, kekzl/imp issue 897: the draft is built without the target's RoPE scaling
   * (linear or YaRN), so its positions rotate at other frequencies: acceptance decays while output stays lossless.
   */
  "draft-rope-unscaled",
  /**
   * Hybrid models, vllm#40738 / sglang#26351 (the class: the verify pass writes one recurrent state per draft
   * position and the wrong one is kept): the state committed after verify is read at index accept_len, the first
   * rejected draft's (in bounds, silent), instead of accept_len - 1.
   */
  "recurrent-state-wrong-slot",
  /**
   * Hybrid models, vllm#39273 / llama.cpp#20075 / ik_llama.cpp#1754: nothing rolls the recurrence back after a
   * rejection; the state after the whole verified block, rejected drafts included, is committed.
   */
  "recurrent-rejected-drafts-kept",
  /**
   * Hybrid models, vllm#48475 / #56531: the committed state is indexed by accepted drafts minus one over the
   * drafts' states, so a round accepting none reads index -1, which wraps to the last draft's (Python's negative index).
   */
  "recurrent-zero-accepted-wraps",
  /**
   * Hybrid models with the prefix cache, vllm#53945 / vllm#55601 / tpu-inference#3412 (the class: a prefix hit
   * restores a recurrent state of another length than the hit's, in bounds and silent): a cached page's node takes
   * the state its creator holds when its pages are cached (after its whole sequence) instead of the state at the
   * node's own last position.
   */
  "prefix-cache-latest-recurrent-state",
  /**
   * vllm#57941 (the draft's RoPE table overrun), TensorRT-LLM#16826, llama.cpp's test_slot_ctx_not_exceeded: the
   * room for speculation is checked at the current length only, so a round near the context limit drafts and
   * verifies its whole K + 1 lookahead past the target's or the draft's context.
   */
  "lookahead-past-limit",
  /**
   * llama.cpp#27852 (the n-gram cache's begin() a no-op), the class of llama.cpp#22105 and #26741: a slot's drafter
   * state (prompt lookup's n-gram history and its ingested-token watermark) is not reset when a request takes a
   * slot another request used; it drafts from the previous request's tokens.
   */
  "drafter-state-kept-on-slot-reuse",
  /**
   * sglang#23802 / #27637 (issue 28): stop strings are checked once per verify round, on the tail of the accepted
   * run's text, instead of token by token: a stop string early in a multi-token run is missed (the request runs
   * on), one before the run's last token but within the tail is found late (the text cut, the tokens after it kept).
   */
  "stop-string-checked-at-round-end",
  /** vllm#26027 (issue 28): a step that emits several tokens streams a delta of its last token only (text and id). */
  "stream-delta-last-token",
  /**
   * sglang#39826 class (issue 28): usage counts a round's whole verified run (its accept length) as completion
   * tokens, not the tokens emitted after a stop, EOS or the cap cut the run.
   */
  "usage-counts-verified-run",
  /**
   * Issue 34 (liveness): a round's draft forward fails and the round's token is decoded without speculation,
   * silently, as llama.cpp's draft-simple does when llama_decode on the draft context fails (common/speculative.cpp
   * draft(); server-context.cpp then decodes the sampled token alone): here for every round whose bonus sits at an
   * even position (chain drafting with a draft model). Outputs stay exact: only "speculation engaged" sees it.
   */
  "draft-failure-plain-decode",
  /**
   * Issue 34 (item 7), a bug class written apart from the project: of the stop strings one token completes, the
   * first in the request's list ends it, not the occurrence that ends first (the engine checks each token, so only
   * a token completing two stop strings shows it).
   */
  "stop-strings-by-list-order",
  /**
   * Issue 34 (item 7), a bug class written apart from the project: an aborted request's stream closes without
   * releasing the text it held back (a possible stop string's start), so its deltas fall short of its text.
   */
  "held-text-dropped-on-abort",
] as const;

export type FaultName = (typeof FAULT_NAMES)[number];

export class Faults {
  private readonly enabled: ReadonlySet<FaultName>;

  constructor(names: readonly FaultName[]) {
    this.enabled = new Set(names);
  }

  has(name: FaultName): boolean {
    return this.enabled.has(name);
  }

  list(): FaultName[] {
    return [...this.enabled];
  }
}
