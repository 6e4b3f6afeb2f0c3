// Law "termination equivalence": every request has sampling options, mostly high-acceptance drafts and
// S up to 5, so accepted runs cross stop ids, EOS, min new tokens and the cap inside one round.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { TERMINATION_EQUIVALENCE } from "../../laws/termination-equivalence.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  TERMINATION_EQUIVALENCE,
  "sampling options on every request, stop ids among the target's tokens, long accepted runs against short caps",
  {
    drafts: ["mirror", "tapped-mirror", "noisy-mirror", "eagle"],
    steps: { min: 2, max: 5 },
    maxNewTokens: { min: 2, max: 10 },
    sampling: { options: GREEDY_SAMPLING_OPTIONS, always: true, required: ["stopTokenIds"] },
  },
);
