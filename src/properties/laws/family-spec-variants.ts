// Property "family spec variants" (issue 34, item 7): model-spec-variants.ts's draws over the preset
// families (sliding window with YaRN or linear RoPE, hybrid), where two more fields are held at one value by
// their presets: Mamba2's conv kernel (recurrent state reads the conv window) and YaRN's original context (the
// RoPE ramp). Apart from the plain presets so that an external engine loading the families from files (which
// carry standalone drafts only: sources/model-cache.ts) keeps them (arbitraries/capabilities.ts narrows a mixed
// space to its plain presets). The hybrid presets refuse graph replay, multi-layer drafting and the EAGLE-3
// mirror (case/consistency.ts): recurrent-state's space.
import { lawProperty } from "../law-property.ts";

/** The property's name: what it draws (no law is named so: law-properties.ts). */
export const FAMILY_SPEC_VARIANTS = "family spec variants";

export default lawProperty(FAMILY_SPEC_VARIANTS, "the family presets with their spec's fixed fields varied", {
  presets: ["swa", "hybrid", "swa-f64", "hybrid-f64"],
  specVariants: true,
  drafts: ["mirror", "noisy-mirror", "tapped-mirror", "truncated-mirror", "eagle", "eagle3", "ngram"],
  // Rejections (noisy mirror, EAGLE heads) roll rounds back through the varied model.
  draftWeights: { "noisy-mirror": 2, eagle: 2 },
  multiLayer: [false],
  graphReplay: [false],
  padded: [false],
  maxNewTokens: { min: 1, max: 12 },
  retracts: { min: 0, max: 1 },
});
