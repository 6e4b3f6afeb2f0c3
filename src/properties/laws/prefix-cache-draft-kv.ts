// Law "prefix-cache draft KV": the prefix cache on with draft models (chains, trees, multi-layer modules,
// whose keys look S tokens ahead), 2..3 requests sharing prefixes and arriving at different steps, pages
// 1..4, retracts.
import { PREFIX_CACHE_DRAFT_KV } from "../../laws/prefix-cache-draft-kv.ts";
import { PROPERTY_DRAFTS } from "../arbitraries/space.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PREFIX_CACHE_DRAFT_KV, "prefix cache on, draft models, 2..3 requests sharing prefixes", {
  prefixCache: [true],
  drafts: PROPERTY_DRAFTS,
  requests: { min: 2, max: 3 },
  maxNewTokens: { min: 3, max: 10 },
  maxArrival: 4,
});
