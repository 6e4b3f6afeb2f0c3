// Property suite of the law in laws/replay-equivalence.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/replay-equivalence.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
