// Property suite of the law in laws/logprob-parity.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/logprob-parity.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
