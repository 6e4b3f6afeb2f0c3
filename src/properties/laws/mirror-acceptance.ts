// Law "mirror acceptance": the oracle drafts, whose every uncut round accepts all S drafts. Sampling
// options that cannot move the argmax only (stop ids cut rounds, logprobs): the mirror drafts the raw argmax.
import { MIRROR_ACCEPTANCE } from "../../laws/mirror-acceptance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(MIRROR_ACCEPTANCE, "mirror, tapped mirror and EAGLE-3 mirror, several rounds", {
  drafts: ["mirror", "tapped-mirror", "eagle3-mirror"],
  maxNewTokens: { min: 2, max: 10 },
  sampling: { options: ["stopTokenIds", "logprobs"] },
});
