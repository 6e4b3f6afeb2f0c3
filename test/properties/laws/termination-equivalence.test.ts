// Property suite of the law in laws/termination-equivalence.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/termination-equivalence.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
