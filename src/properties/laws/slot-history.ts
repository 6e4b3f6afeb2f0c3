// Law "slot history": 2 requests on one request slot, arriving over the first steps, so the later request
// takes the slot the earlier one held (sometimes one that ended longer than their prompt, llama.cpp#27852's corner);
// prompt lookup mostly (its n-gram history is the per-slot drafter state), model drafts too. The twin runs each
// request on a fresh slot.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { SLOT_HISTORY } from "../../laws/slot-history.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(SLOT_HISTORY, "2 requests taking one slot in turn; prompt lookup mostly", {
  slotReuse: true,
  drafts: ["ngram", "mirror", "eagle", "noisy-mirror"],
  draftWeights: { ngram: 4 },
  requests: { min: 2, max: 2 },
  // Short prompts, longer outputs: a request often ends longer than the next one's prompt.
  suffix: { min: 1, max: 5 },
  maxNewTokens: { min: 1, max: 12 },
  // The tiny presets and greedy options: a run checks a twin, so shrinking gets through its budget.
  presets: ["tiny", "tiny-f64"],
  sampling: { options: GREEDY_SAMPLING_OPTIONS },
  maxArrival: 4,
  maxAborts: 0,
  retracts: { min: 0, max: 0 },
  // Synchronous: overlap's own twin would catch a stale slot too, and hold its counterexamples larger.
  overlap: [false],
});
