// A request's stream of uniforms: every random decision of a stochastic request (a token drawn, a draft
// accepted or rejected) takes exactly one uniform from it, in decision order, and the trace records each one.
// The stream is the request's own (seeded from its sampling seed, else its id), so its tokens do not depend on
// batch composition, chunking, paging or retracts (SGLang and vLLM keep per-request generators for seeded
// requests for the same reason), and a law can replay every decision from the trace.
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plusFromState } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";

export class UniformStream {
  private rng: RandomGenerator;
  /** Uniforms taken so far. */
  taken = 0;

  constructor(readonly seed: number) {
    this.rng = UniformStream.start(seed);
  }

  private static start(seed: number): RandomGenerator {
    // pure-rand's xoroshiro128plus(seed) starts from (-1, ~seed, seed, 0): its first outputs are nearly linear in
    // the seed, so neighbouring seeds (replicas seeded s, s + 1, ...) would draw correlated first uniforms. The
    // state words are the seed through murmur3's finalizer instead.
    const words = [1, 2, 3, 4].map((k) => mix32((seed + Math.imul(k, 0x9e3779b9)) | 0));
    return xoroshiro128plusFromState(words);
  }

  /**
   * Mutates: back to the position after `taken` uniforms, as if the later ones were never drawn (overlap: the
   * draws of results in flight when an abort or retract discarded them never happened for the host).
   */
  rewind(taken: number): void {
    this.rng = UniformStream.start(this.seed);
    for (let i = 0; i < taken; i++) uniformFloat64(this.rng);
    this.taken = taken;
  }

  /** Mutates: the next uniform in [0, 1) (53 random bits). */
  next(): number {
    this.taken += 1;
    return uniformFloat64(this.rng);
  }
}

/** The seed of a request's stream: its sampling seed, else its id. */
export function streamSeed(seed: number | undefined, requestId: number): number {
  return seed ?? requestId;
}

/** murmur3's 32-bit finalizer: every input bit flips each output bit with probability about 1/2. */
function mix32(value: number): number {
  let h = value | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}
