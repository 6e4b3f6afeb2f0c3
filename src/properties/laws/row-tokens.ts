// Law "rows carry request tokens": chunked prefill (non-final chunks end inside the prompt), retracts
// that re-prefill, aborts, multi-layer drafting and trees: every place a row's token is chosen.
import { ROW_TOKENS } from "../../laws/row-tokens.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(ROW_TOKENS, "chunk 1..8 or none, budgets, retracts, aborts, chains, trees, multi-layer", {
  chunk: { none: true, min: 1, max: 8 },
  suffix: { min: 2, max: 10 },
  maxNewTokens: { min: 2, max: 10 },
  retracts: { min: 0, max: 1 },
  maxAborts: 1,
});
