// Law "retract/resume invariance": one or two retracts per case, landing anywhere between forwards.
import { RETRACT_INVARIANCE } from "../../laws/retract-invariance.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(RETRACT_INVARIANCE, "1..2 retracts per case, several rounds", {
  retracts: { min: 1, max: 2 },
  maxNewTokens: { min: 2, max: 10 },
  maxAborts: 0,
});
