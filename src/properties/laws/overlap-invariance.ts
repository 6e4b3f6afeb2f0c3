// Law "overlap invariance": overlap scheduling on, 1..3 requests arriving over time, several rounds, aborts
// and retracts landing while results are in flight; every draft kind (prompt lookup's ragged rounds too).
import { OVERLAP_INVARIANCE } from "../../laws/overlap-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(OVERLAP_INVARIANCE, "overlap on, several rounds, aborts and retracts in flight", {
  overlap: [true],
  maxNewTokens: { min: 2, max: 10 },
  // Prompt lookup's ragged verify blocks (an empty draft next to a full one) weighed up.
  draftWeights: { ngram: 6 },
});
