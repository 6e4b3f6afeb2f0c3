// Law "sliding window": the sliding-window family (a window of 4 on one of two layers, float32; a window of 3
// on every layer, float64) on every path at once: chunked prefill, trees and chains, multi-layer modules, graph
// replay, retracts, the prefix cache. Prompts (a 5-token preamble and more) cross the window in their first
// rows; noisy mirrors and EAGLE heads reject drafts, so rounds roll back across it. Every law checks these runs:
// draft reference, mirror acceptance and the invariance laws hold over the family here.
import { SLIDING_WINDOW } from "../../laws/sliding-window.ts";
import { lawProperty } from "../law-property.ts";
import { PROPERTY_DRAFTS } from "../arbitraries/space.ts";

export default lawProperty(SLIDING_WINDOW, "the swa presets, every draft and scheduling mode, rejections", {
  presets: ["swa", "swa-f64"],
  drafts: PROPERTY_DRAFTS,
  // Rejections (noisy mirror, EAGLE heads) are where the window rolls back: as likely as the mirrors' full acceptance.
  draftWeights: { "noisy-mirror": 3, eagle: 2 },
  retracts: { min: 0, max: 1 },
});
