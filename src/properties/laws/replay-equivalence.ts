// Law "graph-replay equivalence": draft decode always on captured graphs, batches of changing shape.
import { REPLAY_EQUIVALENCE } from "../../laws/replay-equivalence.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(REPLAY_EQUIVALENCE, "graph replay on, S 2..5, batches of 1..3 arriving over time", {
  graphReplay: [true],
  steps: { min: 2, max: 5 },
  maxNewTokens: { min: 2, max: 10 },
});
