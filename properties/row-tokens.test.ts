// Property suite of the law in laws/row-tokens.ts (every law checks every run; this one picks the cases).
import property from "./laws/row-tokens.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
