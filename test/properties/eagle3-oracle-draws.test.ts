// check --eagle3-oracle's draws (src/properties/arbitraries/eagle3-oracle.ts): every EAGLE-3 head drawn is the
// oracle on the bigram preset, a space drawing the EAGLE-3 mirror draws the oracle too, and everything else is
// drawn as without the flag (the same seed gives the same cases but for the oracle's draft and preset), so the
// default draws, and the checked-in kills' paths, do not move.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { ORACLE_PRESET, withEagle3Oracle } from "../../src/properties/arbitraries/eagle3-oracle.ts";
import { FULL_SPACE } from "../../src/properties/arbitraries/space.ts";
import mirrorAcceptance from "../../src/properties/laws/mirror-acceptance.ts";

const sample = (space: typeof FULL_SPACE) => fc.sample(caseArbitrary(space), { numRuns: 300, seed: 7 });

describe("--eagle3-oracle draws", () => {
  it("makes every EAGLE-3 head the oracle on the bigram preset, and leaves every other draw as it was", () => {
    const plain = sample(FULL_SPACE);
    const oracle = sample(withEagle3Oracle(FULL_SPACE));
    expect(plain.some((c) => c.draft?.kind === "eagle3")).toBe(true);
    plain.forEach((testCase, i) => {
      const drawn = oracle[i];
      expect(testCase.draft?.oracle).toBeUndefined();
      if (testCase.draft?.kind !== "eagle3") return expect(drawn).toEqual(testCase);
      expect(drawn.draft).toEqual({ ...testCase.draft, oracle: true });
      expect(drawn.model).toEqual({ preset: ORACLE_PRESET });
      expect(drawn.engine).toEqual(testCase.engine);
    });
  });

  it("adds the oracle to a space drawing the EAGLE-3 mirror", () => {
    const space = withEagle3Oracle({ ...mirrorAcceptance.space, faults: [] });
    expect(space.drafts).toEqual([...mirrorAcceptance.space.drafts, "eagle3"]);
    expect(sample(space).some((c) => c.draft?.oracle === true)).toBe(true);
  });
});
