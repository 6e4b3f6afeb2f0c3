// Law "usage counts": detokenized requests in batches up to 3 with stop strings, stop ids, the cap, aborts and
// retracts cutting their runs: the usage must count exactly the tokens emitted after every cut.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { USAGE_COUNTS } from "../../laws/usage-counts.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(USAGE_COUNTS, "stop strings, stop ids, caps and aborts cutting runs; batches up to 3", {
  text: true,
  presets: ["tiny", "tiny-f64", "small-gqa", "small-mha"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "ngram", "eagle3"],
  draftWeights: { mirror: 3 },
  steps: { min: 1, max: 5 },
  padded: [false],
  sampling: { options: GREEDY_SAMPLING_OPTIONS },
  maxNewTokens: { min: 1, max: 12 },
});
