// Law "stop string end": detokenized requests with stop strings cut from the text the target writes
// (arbitraries/text.ts), so a stop often ends inside an accepted run, across tokens or inside a token; mirrors
// weigh most (every draft accepted: multi-token runs), trees, prompt lookup, batches, overlap, retracts. Termination
// equivalence judges the same runs against the reference: the request ends at the stop string's token.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { STOP_STRING_END } from "../../laws/stop-string-end.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(STOP_STRING_END, "stop strings from the target's own text, inside accepted runs", {
  text: true,
  presets: ["tiny", "tiny-f64", "small-gqa"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "ngram"],
  draftWeights: { mirror: 4, "tapped-mirror": 2 },
  steps: { min: 1, max: 5 },
  multiLayer: [false],
  padded: [false],
  sampling: { options: GREEDY_SAMPLING_OPTIONS },
  maxNewTokens: { min: 2, max: 12 },
});
