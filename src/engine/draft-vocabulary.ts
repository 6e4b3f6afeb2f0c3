// EAGLE-3 drafts rank their own, reduced vocabulary: the graph's top-K ids are draft ids, and the tokens the
// engine drafts are their target ids, d + d2t[d] (checkpoints store d2t as offsets). The map is applied to a
// copy of the top-K ids (ONNX Runtime's outputs stay as they were returned), and the draft id itself is
// kept in the trace (draftPredict) so the draft-vocabulary law can check the mapping from the trace alone.
import { forwardResult, type ForwardResult } from "../runtime/ort.ts";

/** The forward's result with every top-K id mapped from the draft vocabulary to target ids. */
export function toTargetIds(result: ForwardResult, draftToTarget: Int32Array): ForwardResult {
  const mapped = new BigInt64Array(result.topIndices.length);
  for (let i = 0; i < mapped.length; i++) {
    const target = draftToTarget[Number(result.topIndices[i])];
    if (target === undefined) throw new Error(`draft id ${result.topIndices[i]} is outside the draft vocabulary`);
    mapped[i] = BigInt(target);
  }
  return forwardResult({ ...result, topIndices: mapped });
}

/** What an engine drafts with when a checkpoint has no d2t: draft id d taken as target id d (vLLM's zeros). */
export function identityMap(size: number): Int32Array {
  return Int32Array.from({ length: size }, (_, id) => id);
}
