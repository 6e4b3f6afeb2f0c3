// Law "acceptance correctness": partial acceptance everywhere (under- and over-acceptance show), prompt
// lookup's 0..S drafts per request included.
import { ACCEPTANCE_CORRECTNESS } from "../../laws/acceptance-correctness.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(ACCEPTANCE_CORRECTNESS, "drafts that reject part of their chain, S 2..5", {
  drafts: ["noisy-mirror", "eagle", "truncated-mirror", "ngram"],
  draftWeights: {},
  steps: { min: 2, max: 5 },
});
