// Law "padding-poison invariance": padded graph replay on, 2..3 requests (batches shrink as requests finish,
// so a smaller bucket follows a larger one and stale static-buffer entries could bite), several rounds.
import { PADDING_POISON_INVARIANCE } from "../../laws/padding-poison-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PADDING_POISON_INVARIANCE, "padded graph replay on, 2..3 requests finishing apart", {
  padded: [true],
  requests: { min: 2, max: 3 },
  maxNewTokens: { min: 2, max: 10 },
  // Prompt lookup's ragged verify blocks (an empty draft next to a full one) weighed up.
  draftWeights: { ngram: 6 },
});
