// Law "bonus stride": batches of 2+ verified together with partial acceptance, so accept_index blocks
// and bonus reads of neighbouring requests differ.
import { BONUS_STRIDE } from "../../src/laws/bonus-stride.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(BONUS_STRIDE, "2..3 requests arriving together, rejecting drafts", {
  drafts: ["noisy-mirror", "eagle", "mirror"],
  requests: { min: 2, max: 3 },
  maxArrival: 1,
  maxNewTokens: { min: 2, max: 10 },
});
