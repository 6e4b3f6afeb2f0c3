// A request's stream of uniforms: every random decision of a stochastic request (a token drawn, a draft
// accepted or rejected) takes exactly one uniform from it, in decision order, and the trace records each one.
// The stream is the request's own (seeded from its sampling seed, else its id), so its tokens do not depend on
// batch composition, chunking, paging or retracts (SGLang and vLLM keep per-request generators for seeded
// requests for the same reason), and a law can replay every decision from the trace.
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";

export class UniformStream {
  private readonly rng: RandomGenerator;
  /** Uniforms taken so far. */
  taken = 0;

  constructor(readonly seed: number) {
    this.rng = xoroshiro128plus(seed | 0);
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
