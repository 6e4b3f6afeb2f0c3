// Law "aux provenance": EAGLE-3 drafts over chunked prefill, batches and several rounds, where auxiliary
// states are gathered from prefill chunks and verify paths of several requests.
import { AUX_PROVENANCE } from "../../laws/aux-provenance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(AUX_PROVENANCE, "EAGLE-3 mirror and head, chunked prefill, batches, several rounds", {
  drafts: ["eagle3-mirror", "eagle3"],
  maxNewTokens: { min: 2, max: 10 },
  // The checkpoint's own auxiliary layer ids (count, ids, order), not always the default set.
  auxLayerCounts: { min: 1, max: 4 },
});
