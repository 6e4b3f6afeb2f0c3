// Law "mirror acceptance" on the EAGLE-3 oracle (src/model/eagle3-oracle.ts) in the reference engine: generated
// cases whose every draft is the oracle head on the bigram preset (check --eagle3-oracle's draw) accept every draft
// of every uncut round; with the auxiliary states read one layer late (the fault eagle3-aux-layer-off-by-one:
// every state the wrong one) the oracle's drafts are rejected and the law fails.
import { expect, test } from "vitest";
import property from "../../../src/properties/laws/mirror-acceptance.ts";
import { withEagle3Oracle } from "../../../src/properties/arbitraries/eagle3-oracle.ts";
import { MIRROR_ACCEPTANCE } from "../../../src/laws/mirror-acceptance.ts";
import { runLawProperty } from "../../../src/properties/law-property.ts";
import { lawTest, runsFromEnv, seedFor } from "../../helpers/vitest-law.ts";

const oracle = { ...property, space: withEagle3Oracle({ ...property.space, drafts: ["eagle3"] as const }) };

lawTest(oracle, runsFromEnv(20));

test("the oracle's acceptance catches auxiliary states read one layer late", { timeout: 600_000 }, async () => {
  const run = await runLawProperty(oracle, {
    numRuns: 20,
    seed: seedFor(MIRROR_ACCEPTANCE),
    faults: ["eagle3-aux-layer-off-by-one"],
    laws: new Set([MIRROR_ACCEPTANCE]),
    shrinkSeconds: 5,
    failureDir: false,
  });
  expect(run.failure?.laws, JSON.stringify(run.stats.get(MIRROR_ACCEPTANCE))).toContain(MIRROR_ACCEPTANCE);
});
