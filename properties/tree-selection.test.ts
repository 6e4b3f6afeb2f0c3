// Property suite of the law in laws/tree-selection.ts (every law checks every run; this one picks the cases).
import property from "./laws/tree-selection.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
