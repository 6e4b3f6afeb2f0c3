// likelyTokens decodes incrementally (each step's row against the earlier rows' K/V): it must give exactly
// the continuation of a full cache-free forward per step, or generated cases (and the checked-in kills)
// would change. Checked token for token against the full forward, for every property preset.
import { describe, expect, it } from "vitest";
import { greedyContinuation, likelyTokens } from "../../src/properties/arbitraries/likely-tokens.ts";
import { PROPERTY_PRESETS } from "../../src/properties/arbitraries/space.ts";
import { buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";

function fullForwardContinuation(name: string, sequence: readonly number[], steps: number): number[] {
  const spec = getPreset(name);
  const weights = buildTarget(spec).weights;
  const tokens = [...sequence];
  for (let step = 0; step < steps; step++) {
    const logits = referenceTarget(spec, weights, tokens).logits;
    const last = logits.subarray((tokens.length - 1) * spec.vocab);
    let best = 0;
    for (let token = 1; token < spec.vocab; token++) if (last[token] > last[best]) best = token;
    tokens.push(best);
  }
  return tokens.slice(sequence.length);
}

describe("likely tokens", () => {
  it.each(PROPERTY_PRESETS)("%s: the incremental continuation is the full forward's", (name) => {
    const spec = getPreset(name);
    const weights = buildTarget(spec).weights;
    for (const start of [[], [3], [11, 12], [40, 41, 42]]) {
      const sequence = [...spec.preamble, ...start.map((token) => token % spec.vocab)];
      expect(greedyContinuation(spec, weights, sequence, 6)).toEqual(fullForwardContinuation(name, sequence, 6));
    }
    const likely = likelyTokens(spec);
    expect(likely.length).toBeGreaterThan(0);
    for (const token of likely) expect(token === spec.bosId || token === spec.eosId).toBe(false);
  });
});
