/**
 * Tie-aware, teacher-forced token comparison (docs/design.md section 4, "Numerics").
 *
 * Why teacher-forced: floating-point results depend on batch shape (a row computed alone and the
 * same row packed with others differ in the last bits), on the execution provider and on graph
 * optimization. Two correct engines can therefore pick different tokens wherever the top two
 * logits are nearly equal, and after that first difference their continuations are unrelated.
 * So the reference is run on the engine's own tokens (prompt + engine output): expected[i] is the
 * reference's argmax given the engine's tokens 0..i-1, and a difference at i is judged on its own,
 * not as the echo of an earlier one.
 *
 * Why tie-aware: at the first difference the reference's top-1 margin decides. A margin at or
 * above epsilon means the engine chose a token the reference clearly did not: a failure
 * ("diverged"). A margin below epsilon is within the numeric noise of batch shape / EP, so it is
 * a "tie": the comparison of that request stops there (later tokens are conditioned on a choice
 * either side could have made) and the tie is reported to the caller to be counted, never
 * silently dropped. Epsilon is in logit units, per dtype and EP, and recorded in golden files.
 *
 * Pure functions, shared by the reference engine's laws and third-party trace validation.
 */
import type { Dtype } from "../model/spec.ts";
import type { ExecutionProvider } from "../runtime/ort.ts";

/** Tie threshold in target logit units (DESIGN section 4): float32 CPU 1e-4, GPU 1e-3, float64 1e-9. */
export function epsilonFor(dtype: Dtype, ep: ExecutionProvider | string = "cpu"): number {
  if (dtype === "float64") return 1e-9;
  return ep === "cpu" ? 1e-4 : 1e-3;
}

export type ComparisonStatus = "equal" | "tie" | "diverged";

export interface TokenComparison {
  status: ComparisonStatus;
  /** Position of the first difference (or of the length mismatch); absent when equal. */
  index?: number;
  /** Reference token at index; undefined when the reference sequence is the shorter one. */
  expected?: number;
  /** Engine token at index; undefined when the engine sequence is the shorter one. */
  got?: number;
  /** Reference top-1 margin at index (absent for a length mismatch). */
  margin?: number;
  /** Positions verified equal: the full length when equal, otherwise index. */
  compared: number;
}

function checkEpsilon(epsilon: number): void {
  if (!(epsilon >= 0) || !Number.isFinite(epsilon)) {
    throw new RangeError(`epsilon must be a finite number >= 0, got ${epsilon}`);
  }
}

/**
 * Compares the engine's tokens with the teacher-forced reference.
 *
 * expected[i] is the reference argmax at step i, margins[i] its top-1 margin (top1 - top2 logit)
 * in logit units; got is the engine's tokens. Positions are compared up to the shorter length; at
 * the first difference the result is "tie" when margins[i] < epsilon, else "diverged" (a NaN
 * margin is never a tie). If one sequence is a strict prefix of the other, the result is
 * "diverged" at index = the shorter length.
 */
export function compareTokens(
  expected: readonly number[],
  margins: readonly number[],
  got: readonly number[],
  epsilon: number,
): TokenComparison {
  checkEpsilon(epsilon);
  if (margins.length < expected.length) {
    throw new RangeError(`margins has ${margins.length} entries for ${expected.length} expected tokens`);
  }
  const n = Math.min(expected.length, got.length);
  for (let i = 0; i < n; i++) {
    if (expected[i] !== got[i]) {
      const margin = margins[i];
      return {
        status: margin < epsilon ? "tie" : "diverged",
        index: i,
        expected: expected[i],
        got: got[i],
        margin,
        compared: i,
      };
    }
  }
  if (expected.length !== got.length) {
    return {
      status: "diverged",
      index: n,
      expected: n < expected.length ? expected[n] : undefined,
      got: n < got.length ? got[n] : undefined,
      compared: n,
    };
  }
  return { status: "equal", compared: n };
}

function checkRow(logits: ArrayLike<number>, offset: number, width: number): void {
  if (!Number.isInteger(width) || width < 1) {
    throw new RangeError(`width must be an integer >= 1, got ${width}`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset + width > logits.length) {
    throw new RangeError(`logits row [${offset}, ${offset + width}) is outside an array of length ${logits.length}`);
  }
}

/**
 * Argmax and top-1 margin (top1 - top2) of the row logits[offset .. offset + width).
 * argmax is relative to offset (a token id); ties go to the lower index, and give margin 0.
 * With width 1 there is no runner-up and the margin is Infinity. NaN logits throw.
 */
export function topMargin(
  logits: ArrayLike<number>,
  offset: number,
  width: number,
): { argmax: number; margin: number } {
  checkRow(logits, offset, width);
  let best = 0;
  let top1 = -Infinity;
  let top2 = -Infinity;
  for (let j = 0; j < width; j++) {
    const v = logits[offset + j];
    if (Number.isNaN(v)) throw new RangeError(`logit ${j} of the row at ${offset} is NaN`);
    if (j === 0 || v > top1) {
      if (j > 0) top2 = top1;
      top1 = v;
      best = j;
    } else if (v > top2) {
      top2 = v;
    }
  }
  // Two -Infinity (or two +Infinity) logits are an exact tie, not a NaN margin.
  const margin = width === 1 ? Infinity : top1 === top2 ? 0 : top1 - top2;
  return { argmax: best, margin };
}

/**
 * Judges one engine token against the reference logits row at that step (teacher-forced).
 * Equal: got is the argmax, margin is the row's top-1 margin. Otherwise margin is
 * logits[argmax] - logits[got], the score gap between the reference's choice and the engine's,
 * and the result is a tie when that gap is below epsilon. A got outside [0, width) diverges with
 * margin Infinity.
 */
export function compareTokenAgainstLogits(
  logits: ArrayLike<number>,
  offset: number,
  width: number,
  got: number,
  epsilon: number,
): { status: ComparisonStatus; argmax: number; margin: number } {
  checkEpsilon(epsilon);
  const { argmax, margin } = topMargin(logits, offset, width);
  if (got === argmax) return { status: "equal", argmax, margin };
  if (!Number.isInteger(got) || got < 0 || got >= width) {
    return { status: "diverged", argmax, margin: Infinity };
  }
  const top = logits[offset + argmax];
  const mine = logits[offset + got];
  const gap = top === mine ? 0 : top - mine;
  return { status: gap < epsilon ? "tie" : "diverged", argmax, margin: gap };
}
