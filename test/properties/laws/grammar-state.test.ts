// Property suite of the law in laws/grammar-state.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/grammar-state.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
