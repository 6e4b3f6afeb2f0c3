// Property suite of the law in laws/overlap-invariance.ts (every law checks every run; this one picks the cases).
import property from "./laws/overlap-invariance.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
