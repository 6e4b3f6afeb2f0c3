// Law "speculation engaged": every model draft (prompt lookup is not judged: a lookup may find nothing), chains,
// trees and multi-layer drafting, long enough outputs that most decode steps have room for a whole round, stop
// ids and EOS cutting rounds, aborts and retracts, sampling options (the engine must go on speculating whatever
// the request asks for).
import { PROPERTY_DRAFTS } from "../arbitraries/space.ts";
import { SPECULATION_ENGAGED } from "../../laws/speculation-engaged.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  SPECULATION_ENGAGED,
  "every model draft, chains, trees and multi-layer, outputs of 3-12 tokens; stop ids, aborts, retracts",
  {
    drafts: PROPERTY_DRAFTS,
    draftWeights: {},
    maxNewTokens: { min: 3, max: 12 },
  },
);
