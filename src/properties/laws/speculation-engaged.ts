// Law "speculation engaged": every model draft (prompt lookup is not judged: a lookup may find nothing), chains,
// trees and multi-layer drafting, outputs long enough that most decode steps have room for a whole round and
// the last S steps none (the max-new-tokens cap), rounds cut by EOS and stop ids, aborts and retracts, sampling
// options (the engine must go on speculating whatever a request asks for). The context boundary, schedules,
// grammars and stop strings meet the law in the runs of the properties drawing them (every law checks every run):
// drawn here they would leave an engine without schedules or draft contexts (llama-server) few cases to run.
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
