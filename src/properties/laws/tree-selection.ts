// Law "tree selection": trees (topk 2 or 4) with S 3..5, so frontiers are selected from the previous
// step's children and the N - 1 cut leaves candidates out; drafts that reject too, batches of 1..3.
import { TREE_SELECTION } from "../../laws/tree-selection.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(TREE_SELECTION, "trees (topk 2, 4), S 3..5, 1..3 requests", {
  topks: [2, 4],
  steps: { min: 3, max: 5 },
  multiLayer: [false],
  drafts: ["mirror", "noisy-mirror", "eagle", "tapped-mirror", "truncated-mirror"],
  maxArrival: 1,
  maxNewTokens: { min: 2, max: 10 },
});
