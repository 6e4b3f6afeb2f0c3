// Property suite of the law in laws/tree-selection.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/tree-selection.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
