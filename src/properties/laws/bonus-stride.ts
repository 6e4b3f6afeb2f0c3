// Law "bonus stride": trees (topk 2 or 4, so N can exceed S + 1) and prompt lookup (each request's block its
// own 0..S drafts + 1) verified in batches of 2+ with partial acceptance, where a bonus read with the wrong
// stride, or from a row another round left, lands in another request's row.
import { BONUS_STRIDE } from "../../laws/bonus-stride.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  BONUS_STRIDE,
  "trees (topk 2, 4) or prompt lookup, 2..3 requests arriving together, rejecting drafts",
  {
    topks: [2, 4],
    drafts: ["noisy-mirror", "eagle", "mirror", "ngram"],
    draftWeights: {},
    requests: { min: 2, max: 3 },
    maxArrival: 1,
    tightPool: [false],
    maxNewTokens: { min: 2, max: 10 },
  },
);
