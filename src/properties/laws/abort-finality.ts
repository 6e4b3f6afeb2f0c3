// Law "abort finality": 1..2 aborts per case landing anywhere (queued requests, between forwards, after a
// step's last forward), overlap on half the time (results in flight when the abort lands).
import { ABORT_FINALITY } from "../../laws/abort-finality.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(ABORT_FINALITY, "1..2 aborts per case, overlap on or off", {
  minAborts: 1,
  maxAborts: 2,
  maxNewTokens: { min: 2, max: 10 },
});
