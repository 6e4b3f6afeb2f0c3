// Law "recurrent state": the hybrid family (Mamba2 blocks around attention, float32 and float64) on what the
// engine runs it with: chains and trees, chunked prefill, batches, retracts (the resume recomputes the state),
// overlap scheduling, prompt lookup's ragged rounds. Noisy mirrors, EAGLE heads and prompt lookup reject drafts,
// so verify's intermediate states must be rolled back; mirrors accept all. Every law checks these runs: lossless,
// reference decode, draft reference, mirror acceptance and the invariance laws hold over the family here.
// The prefix cache: a hit restores the recurrent state a cached node holds (the creator's checkpoint at the
// node's end), so tight pools, evictions and shared prefixes run over the family too.
// Not drawn (refused for hybrid models, case/consistency.ts): graph replay, multi-layer drafting, the EAGLE-3
// mirror.
import { RECURRENT_STATE } from "../../laws/recurrent-state.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(RECURRENT_STATE, "the hybrid presets, chains and trees, rejections, retracts, prefix hits", {
  presets: ["hybrid", "hybrid-f64"],
  drafts: ["mirror", "noisy-mirror", "tapped-mirror", "truncated-mirror", "eagle", "eagle3", "ngram"],
  // Rejections (noisy mirror, EAGLE heads, prompt lookup) are where the recurrence must roll back.
  draftWeights: { "noisy-mirror": 4, eagle: 2, ngram: 2 },
  multiLayer: [false],
  graphReplay: [false],
  padded: [false],
  prefixCache: [false, true],
  tightPool: [false, true],
  retracts: { min: 0, max: 1 },
});
