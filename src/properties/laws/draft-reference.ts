// Law "draft reference": drafts whose logits depend on the hidden input (EAGLE heads, tapped mirrors),
// chunked prefill and several rounds, where hidden-state plumbing bugs show.
import { DRAFT_REFERENCE } from "../../laws/draft-reference.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(DRAFT_REFERENCE, "hidden-sensitive drafts, S 2..5, chunked prefill, several rounds", {
  drafts: ["tapped-mirror", "eagle", "noisy-mirror", "eagle3-mirror", "eagle3"],
  steps: { min: 2, max: 5 },
  maxNewTokens: { min: 2, max: 10 },
  // The checkpoint's own auxiliary layer ids (count, ids, order), not always the default set.
  auxLayerCounts: { min: 1, max: 4 },
});
