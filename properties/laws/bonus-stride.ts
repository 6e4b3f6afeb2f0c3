// Law "bonus stride": trees (topk 2 or 4, so N can exceed S + 1) verified in batches of 2+ with partial
// acceptance, where a bonus read with the wrong stride lands in another request's row.
import { BONUS_STRIDE } from "../../src/laws/bonus-stride.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(BONUS_STRIDE, "trees (topk 2, 4), 2..3 requests arriving together, rejecting drafts", {
  topks: [2, 4],
  drafts: ["noisy-mirror", "eagle", "mirror"],
  requests: { min: 2, max: 3 },
  maxArrival: 1,
  maxNewTokens: { min: 2, max: 10 },
});
