// Law "grammar acceptance": most requests carry a grammar (end states common, so grammars finish requests
// inside accepted runs), with drafts that accept everything (mirrors: the masked drafts agree) and drafts
// that are rejected, trees, prompt lookup (proposals cut at the first token the grammar rejects), batches.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { GRAMMAR_ACCEPTANCE } from "../../laws/grammar-acceptance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  GRAMMAR_ACCEPTANCE,
  "grammars on most requests, end states inside accepted runs, accepting and rejecting drafts, trees, batches up to 3",
  {
    grammar: true,
    // Mirrors weigh most: their masked drafts follow a grammar through its end (EOS drafted and accepted after
    // it), so ends land inside accepted runs; prompt lookup proposes no EOS and EAGLE-3 drafts unmasked.
    drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "truncated-mirror", "ngram", "eagle3-mirror"],
    draftWeights: { mirror: 3, "tapped-mirror": 2 },
    // Multi-layer modules draft unmasked too (src/engine/grammar-draft.ts): the grammar state property draws them.
    multiLayer: [false],
    sampling: { options: GREEDY_SAMPLING_OPTIONS },
    steps: { min: 1, max: 5 },
    maxNewTokens: { min: 2, max: 10 },
  },
);
