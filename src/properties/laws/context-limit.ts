// Law "context limit": cases driven to the context boundary (arbitraries/context.ts): every request's prompt +
// output at the engine's context minus 0..S + 1, half the time a draft context shorter than the target's (one
// that may end inside a prompt); chains over every model draft and prompt lookup, schedules and retracts (a
// resume re-prefills up to the draft's context). Lossless and termination equivalence judge the same runs: the
// request must end as the target-only run does.
import { CONTEXT_LIMIT } from "../../laws/context-limit.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  CONTEXT_LIMIT,
  "requests at the context limit minus 0..S + 1, drafts with a shorter context; chains, no overlap",
  {
    contextBoundary: true,
    draftSchedule: true,
    drafts: ["mirror", "eagle", "noisy-mirror", "tapped-mirror", "truncated-mirror", "eagle3-mirror", "ngram"],
    draftWeights: {},
    topks: [1],
    multiLayer: [false],
    overlap: [false],
    prefixCache: [false],
    steps: { min: 1, max: 5 },
    retracts: { min: 0, max: 1 },
  },
);
