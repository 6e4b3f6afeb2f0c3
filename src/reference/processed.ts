// The cache-free reference of a request with sampling options: the teacher-forced target's logits
// (reference/cache-free.ts) processed at every position that samples an output token, each in the
// context counted from the sequence itself (the prompt, then the output tokens before the position). No
// penalizer state and no speculation, so the engine's incremental bookkeeping is checked against it.
import type { RequestSampling } from "../sampling/params.ts";
import { changesLogits } from "../sampling/params.ts";
import { choose, contextOf, processLogits } from "../sampling/process-logits.ts";
import type { TeacherForcedTarget } from "./cache-free.ts";

export interface ProcessedTarget extends TeacherForcedTarget {
  /**
   * rows[p]: the processed logits after tokens[0..p] for p >= promptLength - 1 (the raw logits when the
   * options change none); predictions[p] is their argmax and margin.
   */
  readonly rows: readonly (Float64Array | undefined)[];
}

/** Processes a teacher-forced target computed with its logits. Pure. */
export function processTarget(
  target: TeacherForcedTarget,
  sampling: RequestSampling,
  vocab: number,
  eosId: number,
): ProcessedTarget {
  const logits = target.logits;
  if (!logits) throw new Error("processTarget needs the target's logits");
  const { params, promptLength } = sampling;
  const prompt = target.tokens.slice(0, promptLength);
  const predictions = [...target.predictions];
  const rows: (Float64Array | undefined)[] = [];
  for (let position = promptLength - 1; position < target.tokens.length; position++) {
    const row = changesLogits(params)
      ? processLogits(
          logits,
          position * vocab,
          vocab,
          params,
          contextOf(prompt, target.tokens.slice(promptLength, position + 1), params.grammar),
          eosId,
        )
      : Float64Array.from(logits.subarray(position * vocab, (position + 1) * vocab));
    rows[position] = row;
    const choice = choose(row);
    predictions[position] = { argmax: choice.predict, margin: choice.margin, topLogit: choice.topLogit };
  }
  return { ...target, predictions, rows };
}
