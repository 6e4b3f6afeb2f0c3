// Law "speculation engaged": where rounds stop fitting. Requests driven to the context boundary (their prompt +
// output at the context minus 0..S + 1, a shorter draft context half the time: arbitraries/context.ts) and to
// the max-new-tokens cap, rounds cut by EOS and stop ids, aborts and
// retracts, speculation schedules (off rounds are excused), every model draft (prompt lookup is not judged: a
// lookup may find nothing). Chains only, as the context boundary is; trees, multi-layer drafting, stop strings and
// grammars meet the law in every other property's runs.
import { PROPERTY_DRAFTS } from "../arbitraries/space.ts";
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { SPECULATION_ENGAGED } from "../../laws/speculation-engaged.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  SPECULATION_ENGAGED,
  "every model draft at the context and max-new-tokens boundaries; stop ids, schedules; chains",
  {
    contextBoundary: true,
    draftSchedule: true,
    drafts: PROPERTY_DRAFTS,
    draftWeights: {},
    topks: [1],
    multiLayer: [false],
    overlap: [false],
    prefixCache: [false],
    sampling: { options: GREEDY_SAMPLING_OPTIONS },
    steps: { min: 1, max: 4 },
    maxNewTokens: { min: 4, max: 12 },
    retracts: { min: 0, max: 1 },
  },
);
