// Law "placeholder resolution": overlap on, 2..3 requests (the ring holds entries of several producers), 2..3
// retracts and up to one abort per case landing while placeholders are pending, several rounds each.
import { PLACEHOLDER_RESOLUTION } from "../../laws/placeholder-resolution.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(PLACEHOLDER_RESOLUTION, "overlap on, 2..3 requests, 2..3 retracts and aborts in flight", {
  overlap: [true],
  requests: { min: 2, max: 3 },
  maxNewTokens: { min: 2, max: 10 },
  retracts: { min: 2, max: 3 },
});
