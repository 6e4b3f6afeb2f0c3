// Law "page-size invariance": pages 2..4 against page 1, verify windows across page boundaries.
import { PAGE_SIZE_INVARIANCE } from "../../laws/page-size-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PAGE_SIZE_INVARIANCE, "page sizes 2..4, several rounds", {
  pages: { min: 2, max: 4 },
  maxNewTokens: { min: 2, max: 10 },
  maxAborts: 1,
});
