// Law "phase contracts": hidden-sensitive drafts, S >= 2 and batches of 2+, where a draft-phase buffer
// reused for draft extend shows (padded rows take the wrong request's or position's hidden state).
import { PHASE_CONTRACTS } from "../../laws/phase-contracts.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PHASE_CONTRACTS, "EAGLE heads and tapped mirror, S 2..5, several rounds", {
  drafts: ["eagle", "tapped-mirror", "noisy-mirror", "eagle3"],
  steps: { min: 2, max: 5 },
  maxNewTokens: { min: 2, max: 10 },
});
