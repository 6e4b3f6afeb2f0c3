// Law "sampling distribution": one stochastic request repeated 32-48 times with distinct seeds
// in one batch, so a run holds a few hundred sampled tokens (the test needs 100). Prefill in one chunk, no aborts or retracts: the replicas are what this property is about.
import { SAMPLING_DISTRIBUTION } from "../../laws/sampling-distribution.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(SAMPLING_DISTRIBUTION, "replicas of stochastic requests with distinct seeds, one batch", {
  presets: ["tiny", "tiny-f64", "small-gqa"],
  steps: { min: 1, max: 4 },
  topks: [1, 2],
  chunk: { none: true, noneOnly: true, min: 1, max: 1 },
  pages: { min: 1, max: 1 },
  budget: { unlimited: true, unlimitedOnly: true, min: 1, max: 1 },
  // Draft decode on captured graphs has its own property; here it would only add a 32-48 request twin.
  graphReplay: [false],
  requests: { min: 1, max: 1 },
  replicas: { min: 32, max: 48 },
  maxNewTokens: { min: 8, max: 12 },
  maxArrival: 0,
  maxAborts: 0,
  retracts: { min: 0, max: 0 },
  // Cuts that leave one token (top-p 0.7, top-k 3 at low temperatures), stop ids and min tokens leave fewer
  // informative samples: the options here keep most positions random. Sampling replay covers the rest.
  sampling: { options: ["temperature", "minP", "topK", "logitBias", "seed"], always: true, required: ["temperature"] },
});
