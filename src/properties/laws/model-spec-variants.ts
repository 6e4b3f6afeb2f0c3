// Property "model spec variants" (issue 34, item 7): no law of its own. Its cases vary the spec fields every
// preset holds at one value (arbitraries/spec-variants.ts: RMSNorm epsilon, RoPE base, BOS and EOS ids, Mamba2's
// conv kernel, YaRN's original context), over every preset family: plain, sliding window and scaled RoPE,
// hybrid. Every law checks its runs, as every property's: reference decode and the draft laws read the model
// the case gives, termination equivalence and grammar acceptance its EOS id, recurrent state the conv kernel,
// sliding window the scaled RoPE. Keyed by what it draws, not by a law (law-properties.ts says why).
// The hybrid presets refuse graph replay, multi-layer drafting and the EAGLE-3 mirror (case/consistency.ts), so
// this space draws none of them (recurrent-state's space, over every family).
import { lawProperty } from "../law-property.ts";
import { PROPERTY_PRESETS } from "../arbitraries/space.ts";

/** The property's name: what it draws (no law is named so: law-properties.ts). */
export const MODEL_SPEC_VARIANTS = "model spec variants";

export default lawProperty(MODEL_SPEC_VARIANTS, "every preset family with its spec's fixed fields varied", {
  presets: [...PROPERTY_PRESETS, "swa", "swa-f64", "hybrid", "hybrid-f64"],
  specVariants: true,
  drafts: ["mirror", "noisy-mirror", "tapped-mirror", "truncated-mirror", "eagle", "eagle3", "ngram"],
  // Rejections (noisy mirror, EAGLE heads) roll rounds back through the varied model.
  draftWeights: { "noisy-mirror": 2, eagle: 2 },
  multiLayer: [false],
  graphReplay: [false],
  padded: [false],
  // Outputs long enough to reach a moved EOS.
  maxNewTokens: { min: 1, max: 12 },
  retracts: { min: 0, max: 1 },
});
