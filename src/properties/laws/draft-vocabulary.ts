// Law "draft vocabulary": EAGLE-3 drafts, chains and trees (every child a drafted id), several rounds.
import { DRAFT_VOCABULARY } from "../../laws/draft-vocabulary.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(DRAFT_VOCABULARY, "EAGLE-3 head and mirror, chains and trees, several rounds", {
  drafts: ["eagle3", "eagle3-mirror"],
  maxNewTokens: { min: 2, max: 10 },
  // The checkpoint's own auxiliary layer ids (count, ids, order), not always the default set.
  auxLayerCounts: { min: 1, max: 4 },
});
