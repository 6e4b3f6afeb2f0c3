// Property "model spec variants" (issue 34, item 7): no law of its own. Its cases vary the spec fields every
// preset holds at one value (arbitraries/spec-variants.ts: RMSNorm epsilon, RoPE base, BOS and EOS ids) over the
// plain presets and the whole space: every draft kind, multi-layer drafting, graph replay, the prefix cache.
// Every law checks its runs, as every property's: reference decode and the draft laws read the model the case
// gives, termination equivalence and grammar acceptance its EOS id. The families' own fields (Mamba2's conv
// kernel, YaRN's original context) are family-spec-variants.ts's. Keyed by what it draws, not by a law
// (law-properties.ts says why).
import { lawProperty } from "../law-property.ts";
import { PROPERTY_PRESETS } from "../arbitraries/space.ts";

/** The property's name: what it draws (no law is named so: law-properties.ts). */
export const MODEL_SPEC_VARIANTS = "model spec variants";

export default lawProperty(MODEL_SPEC_VARIANTS, "the plain presets with their spec's fixed fields varied", {
  presets: PROPERTY_PRESETS,
  specVariants: true,
  // Outputs long enough to reach a moved EOS.
  maxNewTokens: { min: 1, max: 12 },
});
