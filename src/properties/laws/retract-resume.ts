// Law "retract resumes": 1..2 retracts per case landing anywhere between forwards (mid-prefill, mid-round,
// after a step's last forward), overlap on or off, several rounds so most land on a running request.
import { RETRACT_RESUMES } from "../../laws/retract-resume.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(RETRACT_RESUMES, "1..2 retracts per case landing on running requests", {
  retracts: { min: 1, max: 2 },
  maxNewTokens: { min: 4, max: 10 },
  maxAborts: 0,
});
