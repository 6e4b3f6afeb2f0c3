// Law "processing parity": every request has sampling options (penalties, bias and min tokens move the
// greedy token), drafts that accept and reject, trees and batches, so processing runs at verified
// positions, at the bonus and across rounds.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { PROCESSING_PARITY } from "../../laws/processing-parity.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  PROCESSING_PARITY,
  "sampling options on every request, accepting and rejecting drafts, trees, batches up to 3",
  {
    steps: { min: 1, max: 5 },
    maxNewTokens: { min: 2, max: 10 },
    sampling: { options: GREEDY_SAMPLING_OPTIONS, always: true },
  },
);
