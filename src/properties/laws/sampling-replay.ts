// Law "sampling replay": every request samples (temperature on, top-k / top-p / min-p and processors in
// combination), drafts that accept and reject (the noisy mirror and the EAGLE head reject often), trees,
// multi-layer and target-only decoding, so every kind of decision (plain draw, accept test, recovery,
// bonus) is replayed.
import { SAMPLING_OPTIONS } from "../../sampling/params.ts";
import { SAMPLING_REPLAY } from "../../laws/sampling-replay.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(SAMPLING_REPLAY, "stochastic requests, accepting and rejecting drafts, trees, batches", {
  maxNewTokens: { min: 2, max: 10 },
  sampling: { options: SAMPLING_OPTIONS, always: true, required: ["temperature"] },
});
