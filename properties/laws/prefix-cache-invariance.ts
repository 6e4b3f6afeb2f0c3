// Law "prefix-cache invariance": the prefix cache on, 2..3 requests arriving at different steps and sharing
// prompt prefixes (the preamble, plus up to 10 copied suffix tokens), pages 1..4 (hits at and inside page
// boundaries), tight pools (eviction), retracts (a resumed request hits its own cached prefix).
import { PREFIX_CACHE_INVARIANCE } from "../../src/laws/prefix-cache-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PREFIX_CACHE_INVARIANCE, "prefix cache on, 2..3 requests sharing prefixes, staggered", {
  prefixCache: [true],
  requests: { min: 2, max: 3 },
  maxArrival: 4,
});
