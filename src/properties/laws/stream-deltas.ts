// Law "stream deltas": detokenized requests whose steps emit several tokens (mirrors accept every draft, S up to
// 5) streamed with stop strings that hold text back (arbitraries/text.ts), beside prompt lookup's ragged rounds,
// overlap's late processing, aborts and retracts.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { STREAM_DELTAS } from "../../laws/stream-deltas.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(STREAM_DELTAS, "multi-token steps streamed, stop strings holding text back", {
  text: true,
  presets: ["tiny", "tiny-f64", "small-gqa"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "ngram", "truncated-mirror"],
  draftWeights: { mirror: 3, ngram: 2 },
  steps: { min: 1, max: 5 },
  multiLayer: [false],
  padded: [false],
  sampling: { options: GREEDY_SAMPLING_OPTIONS },
  maxNewTokens: { min: 2, max: 12 },
});
