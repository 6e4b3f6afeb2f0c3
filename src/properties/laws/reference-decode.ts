// Law "reference decode": both dtypes, every preset, long enough outputs to reach EOS on small-gqa.
import { REFERENCE_DECODE } from "../../laws/reference-decode.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(REFERENCE_DECODE, "every preset and dtype, outputs up to 12 tokens, ragged arrivals", {
  maxNewTokens: { min: 1, max: 12 },
});
