// Law "stop trim": detokenized requests asking for logprobs, with stop strings cut from the text the target
// writes (arbitraries/text.ts): a stop ending inside an accepted run must trim the run's tokens and their logprobs
// with the text; mirrors weigh most (multi-token runs), trees and batches.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { STOP_TRIM } from "../../laws/stop-trim.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(STOP_TRIM, "stop strings inside accepted runs, logprobs on every request", {
  text: true,
  presets: ["tiny", "tiny-f64", "small-gqa"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "eagle3-mirror"],
  draftWeights: { mirror: 4 },
  steps: { min: 1, max: 5 },
  multiLayer: [false, true],
  padded: [false],
  sampling: { options: GREEDY_SAMPLING_OPTIONS, always: true, required: ["logprobs"] },
  maxNewTokens: { min: 2, max: 12 },
  // Issue 34: two stop strings one token completes (stop string end judges which ends the request).
  overlappingStops: true,
});
