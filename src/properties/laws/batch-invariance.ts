// Law "batch invariance": 2..3 requests, mostly arriving together, against the reordered batch.
import { BATCH_INVARIANCE } from "../../laws/batch-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(BATCH_INVARIANCE, "2..3 requests arriving within 1 step, reordered baseline", {
  requests: { min: 2, max: 3 },
  maxArrival: 1,
  tightPool: [false],
  draftWeights: { ngram: 8 },
  maxNewTokens: { min: 2, max: 10 },
});
