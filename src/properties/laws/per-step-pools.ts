// Law "per-step pools": multi-layer drafting always (mirror-family drafts, topk 1), S 2..5 so steps
// after the first exist.
import { PER_STEP_POOLS } from "../../laws/per-step-pools.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PER_STEP_POOLS, "multi-layer drafting, mirror-family drafts, S 2..5", {
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "truncated-mirror"],
  topks: [1],
  multiLayer: [true],
  steps: { min: 2, max: 5 },
  maxNewTokens: { min: 2, max: 10 },
});
