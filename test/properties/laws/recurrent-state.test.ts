// Property suite of the law in laws/recurrent-state.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/recurrent-state.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
