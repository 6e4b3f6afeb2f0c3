// Law "prefix-cache invariance": the prefix cache on with the smallest pool the case admits (requests wait
// for room, the cache evicts while prefixes are shared), 3 requests arriving at different steps and sharing
// prompt prefixes (the preamble, plus up to 10 copied suffix tokens), pages 1..4 (hits at and inside page
// boundaries), outputs long enough to fill the pool, retracts (a resumed request hits its own cached prefix).
import { PREFIX_CACHE_INVARIANCE } from "../../laws/prefix-cache-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PREFIX_CACHE_INVARIANCE, "prefix cache on, tight pools, 3 requests sharing prefixes", {
  prefixCache: [true],
  tightPool: [true],
  requests: { min: 3, max: 3 },
  maxNewTokens: { min: 5, max: 10 },
  maxArrival: 4,
});
