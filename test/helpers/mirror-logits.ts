// The mirror family's draft logits two ways, for the export tests (issue 34, part 6): the case's ONNX mirror
// graph (what the reference engine and the laws score trees with: logits times 2^16, tree scores its TopK
// minus its log-softmax normalizer) and a standalone draft's weights read back from an exported file, run
// through the float64 TypeScript forward over [BOS, ...tokens] (what an engine loading the export computes).
// expectMirrorLogits compares them and the scores a K = 2 tree ranks.
import { expect } from "vitest";
import type { LoadedModels } from "../../src/case/models.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { kvDim, MIRROR_LOGIT_SCALE, type ModelSpec } from "../../src/model/spec.ts";
import type { TargetWeights } from "../../src/model/weights.ts";
import { DEFAULT_RUNTIME, ModelSession, type FloatArray } from "../../src/runtime/ort.ts";

/** Additive mask of a column a row does not attend (finite, as the graph tests use). */
const MASKED = -1e9;

export interface DraftRows {
  /** [T, V]. */
  logits: Float64Array;
  /** [T, 2]: log-softmax of each row's best and second-best token (what a K = 2 tree's scores add up). */
  topScores: Float64Array;
}

/** One causal forward of the case's (first) mirror-family draft graph over `tokens` at anchor positions 0..T-1. */
export async function mirrorGraphRows(models: LoadedModels, tokens: readonly number[]): Promise<DraftRows> {
  const { spec } = models;
  const graph = models.draft!.graphs[0];
  const session = await ModelSession.create(
    graph.bytes,
    spec.dtype,
    spec.hidden,
    DEFAULT_RUNTIME,
    graph.window,
    graph.recurrentInitial,
  );
  try {
    const rows = tokens.length;
    const floats = (n: number): FloatArray => (spec.dtype === "float32" ? new Float32Array(n) : new Float64Array(n));
    const mask = floats(rows * rows);
    for (let t = 0; t < rows; t++) for (let s = t + 1; s < rows; s++) mask[t * rows + s] = MASKED;
    const result = await session.run({
      tokens: BigInt64Array.from(tokens, BigInt),
      positions: BigInt64Array.from(tokens, (_, i) => BigInt(i)),
      hiddenIn: floats(rows * spec.hidden),
      kCache: floats(graph.layers * kvDim(spec)),
      vCache: floats(graph.layers * kvDim(spec)),
      cacheDims: [graph.layers, 1, kvDim(spec)],
      ctxSlots: new BigInt64Array(0),
      mask,
      withLogits: true,
    });
    const topScores = new Float64Array(rows * 2);
    for (let r = 0; r < rows; r++)
      for (let k = 0; k < 2; k++)
        topScores[r * 2 + k] = result.topValues[r * result.topK + k] - result.logNormalizer[r];
    return { logits: Float64Array.from(result.logits!), topScores };
  } finally {
    await session.release();
  }
}

/** A standalone draft read back from an export: the float64 forward over [BOS, ...tokens], BOS's row dropped. */
export function standaloneRows(spec: ModelSpec, weights: TargetWeights, tokens: readonly number[]): DraftRows {
  const { logits: all } = referenceTarget({ ...spec, layers: weights.layers.length }, weights, [spec.bosId, ...tokens]);
  const logits = all.slice(spec.vocab);
  const rows = tokens.length;
  const topScores = new Float64Array(rows * 2);
  for (let r = 0; r < rows; r++) {
    const row = Array.from(logits.subarray(r * spec.vocab, (r + 1) * spec.vocab));
    const sorted = [...row].sort((a, b) => b - a);
    const logNormalizer = sorted[0] + Math.log(row.reduce((sum, value) => sum + Math.exp(value - sorted[0]), 0));
    topScores[r * 2] = sorted[0] - logNormalizer;
    topScores[r * 2 + 1] = sorted[1] - logNormalizer;
  }
  return { logits, topScores };
}

/** The greedy continuation of `prompt` by `weights` (cache-free), so each row's best token is the next row's. */
export function greedyChain(
  spec: ModelSpec,
  weights: TargetWeights,
  prompt: readonly number[],
  count: number,
): number[] {
  const tokens = [...prompt];
  for (let i = 0; i < count; i++) {
    const { logits } = standaloneRows(spec, weights, tokens);
    const last = logits.subarray((tokens.length - 1) * spec.vocab, tokens.length * spec.vocab);
    tokens.push(last.indexOf(Math.max(...last)));
  }
  return tokens;
}

/**
 * Rows where a K = 2, N = 3 tree (two drafts) would rank the second root child above the greedy chain's
 * depth-2 node: score(second child of row r) > score(best of row r) + score(best of row r + 1), along a
 * greedy chain. The mirror acceptance law needs none (the tree must hold the whole chain).
 */
export function chainBreakingRows(rows: DraftRows): number[] {
  const breaking: number[] = [];
  const count = rows.topScores.length / 2;
  for (let r = 0; r + 1 < count; r++)
    if (rows.topScores[r * 2 + 1] > rows.topScores[r * 2] + rows.topScores[(r + 1) * 2]) breaking.push(r);
  return breaking;
}

/**
 * The exported draft's logits and top-2 scores are the mirror graph's within the graph tests' tolerance (1e-4
 * per unit of logit scale in float32, 1e-9 in float64; the unit carries the draft's 2^16): an export without the
 * scale is off by a factor of 65536 and fails on every row.
 */
export function expectMirrorLogits(spec: ModelSpec, exported: DraftRows, graph: DraftRows, what: string): number {
  const unit = spec.logitStd * MIRROR_LOGIT_SCALE;
  const tolerance = (spec.dtype === "float32" ? 1e-4 : 1e-9) * unit;
  let worst = 0;
  expect(exported.logits.length, what).toBe(graph.logits.length);
  for (let i = 0; i < graph.logits.length; i++) worst = Math.max(worst, Math.abs(exported.logits[i] - graph.logits[i]));
  for (let i = 0; i < graph.topScores.length; i++)
    worst = Math.max(worst, Math.abs(exported.topScores[i] - graph.topScores[i]));
  expect(worst, `${what}: max |exported - graph| over logits and top-2 scores`).toBeLessThanOrEqual(tolerance);
  return worst / unit;
}
