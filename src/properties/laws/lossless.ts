// Law "lossless": drafts that reject (noisy mirror, EAGLE head, truncated mirror) next to the mirror,
// so acceptance paths of every length feed the emitted tokens.
import { LOSSLESS } from "../../laws/lossless.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(LOSSLESS, "rejecting and accepting drafts, S up to 5, batches up to 3", {
  drafts: ["noisy-mirror", "mirror", "eagle", "truncated-mirror"],
});
