// Law "stream deltas": detokenized requests whose steps emit several tokens (mirrors accept every draft, S up to
// 5) streamed with stop strings that hold text back (arbitraries/text.ts), beside prompt lookup's ragged rounds,
// overlap's late processing, aborts and retracts.
// Issue 34 (item 7): an abort while the stream holds text back (a possible stop string's start) must release it in
// the last delta; drawn independently, about 1% of cases reached it. Two aborts per case landing at steps 2..7,
// arrivals at steps 0..1, prefill in one to three steps and outputs of 8..16 tokens put most aborts after a request
// streamed text; the stop string is never included in the output here (with it nothing is held back). Two stop
// strings one token completes are drawn too (overlappingStops). scripts/corner-rates.ts measures both corners.
import { GREEDY_SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { STREAM_DELTAS } from "../../laws/stream-deltas.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(STREAM_DELTAS, "multi-token steps streamed, stop strings holding text back, aborts", {
  text: true,
  presets: ["tiny", "tiny-f64", "small-gqa"],
  drafts: ["mirror", "tapped-mirror", "noisy-mirror", "ngram", "truncated-mirror"],
  draftWeights: { mirror: 3, ngram: 2 },
  steps: { min: 1, max: 5 },
  multiLayer: [false],
  padded: [false],
  sampling: { options: GREEDY_SAMPLING_OPTIONS.filter((option) => option !== "includeStopStrInOutput") },
  maxNewTokens: { min: 8, max: 16 },
  minAborts: 2,
  maxAborts: 2,
  abortSteps: { min: 2, max: 7 },
  maxArrival: 1,
  chunk: { none: true, min: 4, max: 8 },
  budget: { unlimited: true, min: 8, max: 16 },
  overlappingStops: true,
});
