// Law "padding-poison invariance": padded graph replay on, 3 requests arriving together and finishing apart
// (batches shrink as requests finish, so a smaller bucket follows a larger one and stale static-buffer entries
// could bite), several rounds. Issue 25: the stale-padding-slot fault bites when a request finishes while a
// later one in the batch goes on and the accepted lengths vary (its padding rows then point at the survivor's
// persisted KV): partial acceptance (the noisy mirror) and chains weighed up, no aborts or retracts (which end
// or reset the survivor), so every seed of `specconf mutants` kills it (test/laws/mutants-seeds.test.ts).
// Prompt lookup stays in the mix for its ragged verify blocks (an empty draft next to a full one).
import { PADDING_POISON_INVARIANCE } from "../../laws/padding-poison-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PADDING_POISON_INVARIANCE, "padded graph replay on, 3 requests finishing apart", {
  padded: [true],
  drafts: ["noisy-mirror", "ngram"],
  draftWeights: { "noisy-mirror": 6, ngram: 1 },
  topks: [1, 1, 2],
  // Drawn as 3; shrunk as far as the failure allows (one request's varying extend batches can show the corner too).
  requests: { min: 3, max: 3, shrinkTo: 1 },
  maxArrival: 0,
  maxNewTokens: { min: 3, max: 12 },
  maxAborts: 0,
  retracts: { min: 0, max: 0 },
});
