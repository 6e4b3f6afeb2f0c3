// Law "grammar state": grammars with drafts that are rejected (the EAGLE head, the noisy mirror, prompt
// lookup) so rejected drafts exist to leave the matcher behind, retracts so states must survive resume, and
// overlap, whose rows are masked ahead of the processed output.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { GRAMMAR_STATE } from "../../laws/grammar-state.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  GRAMMAR_STATE,
  "grammars with rejected drafts, 0..2 retracts, overlap; every masked row's state recomputed",
  {
    grammar: true,
    sampling: { options: GREEDY_SAMPLING_OPTIONS },
    // Rejecting drafts mostly; the mirror's masked drafts follow a grammar through its end (coverage).
    drafts: ["eagle", "noisy-mirror", "ngram", "mirror", "truncated-mirror"],
    draftWeights: { eagle: 2, "noisy-mirror": 2, mirror: 2 },
    // Multi-layer modules draft unmasked (src/engine/grammar-draft.ts): one case in three.
    multiLayer: [false, false, true],
    steps: { min: 1, max: 5 },
    maxNewTokens: { min: 2, max: 10 },
    retracts: { min: 0, max: 2 },
  },
);
