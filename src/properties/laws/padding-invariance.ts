// Law "padding invariance": padded graph replay on (buckets 1, 2, 4, 8, 16), 1..3 requests whose decode-side
// forwards land on buckets with padding rows, every draft kind.
import { PADDING_INVARIANCE } from "../../laws/padding-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PADDING_INVARIANCE, "padded graph replay on, 1..3 requests, several rounds", {
  padded: [true],
  maxNewTokens: { min: 2, max: 10 },
});
