// Law "KV conservation": rejections (rejected verify slots; prompt lookup's ragged rounds), pages above 1
// and aborts between forwards, where slots leak or are owned twice; with the prefix cache, reference counts.
import { KV_CONSERVATION } from "../../laws/kv-conservation.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(KV_CONSERVATION, "rejecting drafts, pages 1..4, up to 2 aborts", {
  drafts: ["noisy-mirror", "eagle", "mirror", "ngram"],
  draftWeights: {},
  maxAborts: 2,
});
