// Law "positions": chunking, paging, several requests per batch and aborts between forwards, where
// positions and masks go wrong.
import { POSITIONS } from "../../laws/positions.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(POSITIONS, "chunks, pages, batches of 1..3, up to 2 aborts", {
  maxAborts: 2,
  maxArrival: 2,
});
