// Law "chunk invariance": always chunked (chunk 1..8 or a small budget), prompts long enough that
// chunks end near the prompt end.
import { CHUNK_INVARIANCE } from "../../laws/chunk-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(CHUNK_INVARIANCE, "chunk 1..8 (never unchunked), suffixes of 2..10 tokens", {
  chunk: { none: false, min: 1, max: 8 },
  suffix: { min: 2, max: 10 },
  maxNewTokens: { min: 2, max: 10 },
});
