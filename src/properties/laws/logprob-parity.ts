// Law "logprob parity": every request asks for logprobs, most with penalties or bias too (the processed
// distribution), over accepting drafts so most tokens are speculated ones.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { LOGPROB_PARITY } from "../../laws/logprob-parity.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(LOGPROB_PARITY, "logprobs on every request with other options, several rounds", {
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "truncated-mirror"],
  steps: { min: 1, max: 5 },
  maxNewTokens: { min: 2, max: 10 },
  sampling: { options: GREEDY_SAMPLING_OPTIONS, always: true, required: ["logprobs"] },
});
