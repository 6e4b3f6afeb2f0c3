// Law "context-gather invariance": every case gathers its context on the CPU EP (the GPU EPs' feed), over the
// whole space: contexts that grow chunk by chunk, pages of several slots and prefix hits (a context of several
// runs of consecutive slots, gathered run by run), trees and ragged prompt-lookup rounds, batches whose contexts
// differ in length (the recycled buffers grow and are reused), retracts (a context re-prefilled on other slots).
import { CONTEXT_GATHER_INVARIANCE } from "../../laws/context-gather-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(CONTEXT_GATHER_INVARIANCE, "the context gathered on the CPU EP, the whole space", {
  gatherContext: [true],
  retracts: { min: 0, max: 1 },
});
