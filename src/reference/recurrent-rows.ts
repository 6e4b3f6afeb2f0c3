// The cache-free references' recurrent feeds (hybrid models, model/mamba2-graph.ts): every sequence they run
// starts from the model's initial state (zeros for a target, a mirror's after the prefix its graph skips), and
// each row continues from the row one position before it that it attends (its causal predecessor or tree
// parent). No state is kept between forwards: the references recompute from the first token.
import type { ForwardFeeds, ModelSession } from "../runtime/ort.ts";

/**
 * rec_init and rec_src for rows whose recurrence parents are `parents` (row indices of the same forward, -1 for
 * a sequence's first row); nothing for a graph without recurrent layers.
 */
export function recurrentRowFeeds(
  session: ModelSession,
  parents: readonly number[],
): Pick<ForwardFeeds, "recInit" | "recSrc"> {
  if (!session.recurrent) return {};
  const initial = session.recurrent.initial;
  return {
    recInit: session.dtype === "float32" ? Float32Array.from(initial) : Float64Array.from(initial),
    recSrc: BigInt64Array.from(parents, (parent) => BigInt(parent < 0 ? 0 : parent + 1)),
  };
}

/** Parents of a causal run of `rows` rows: each row's predecessor. */
export function causalParents(rows: number): number[] {
  return Array.from({ length: rows }, (_, r) => r - 1);
}
