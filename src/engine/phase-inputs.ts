// Separate input types per draft phase (sglang PR 24859): draft-decode hidden states are one row per
// request ([bs, H]; bs * topk inside a tree loop), draft-extend hidden states are one row per extended
// position ([sum(rows), H]). Constructors check the row counts, so one phase's buffer cannot be passed
// where the other's is expected without saying so (the phase-confusion fault does it on purpose).
import type { DraftInputRows, HiddenRows } from "./hidden-rows.ts";
import type { Request } from "./request.ts";

export interface DraftExtendSegment {
  request: Request;
  /** Anchor (draft KV position) of the segment's first row; rows are consecutive. */
  firstAnchor: number;
  /** tokens[i] pairs with the hidden state of anchor firstAnchor + i (that is x_{anchor+1}). */
  tokens: number[];
  /** Only the last segment of a request's prompt, or any post-verify segment, yields d_1. */
  yieldsDraft: boolean;
}

export class DraftExtendInput {
  readonly kind = "draft-extend" as const;

  constructor(
    readonly segments: readonly DraftExtendSegment[],
    /** [sum(segment rows), H] (EAGLE-3: the auxiliary states, [sum(segment rows), auxLayers * H]) */
    readonly hidden: DraftInputRows,
  ) {
    const rows = segments.reduce((sum, segment) => sum + segment.tokens.length, 0);
    if (hidden.count !== rows) throw new Error(`draft extend: ${hidden.count} hidden rows for ${rows} extend rows`);
  }
}

export class DraftDecodeInput {
  readonly kind = "draft-decode" as const;

  constructor(
    readonly requests: readonly Request[],
    /** Rows per request: topk in a tree/chain step, k for multi-layer step k. */
    readonly rowsPerRequest: number,
    /** One token per row, request-major. */
    readonly tokens: readonly number[],
    /** [bs * rowsPerRequest, H]: the hidden state each row continues from. */
    readonly hidden: HiddenRows,
  ) {
    const rows = requests.length * rowsPerRequest;
    if (hidden.count !== rows || tokens.length !== rows) {
      throw new Error(
        `draft decode: ${hidden.count} hidden rows and ${tokens.length} tokens for ${requests.length} requests x ${rowsPerRequest}`,
      );
    }
  }
}

/**
 * The phase-confusion fault: a draft-phase buffer ([bs, H]) reused as draft-extend input, padded by
 * repeating its last row or truncated to the expected count. It corrupts silently instead of crashing.
 */
export function confuseDraftPhaseHidden(draftPhase: HiddenRows, expectedRows: number): HiddenRows {
  const indices = Array.from({ length: expectedRows }, (_, i) => Math.min(i, draftPhase.count - 1));
  return draftPhase.select(indices);
}
