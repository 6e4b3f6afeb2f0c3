// Property suite of the law in laws/padding-invariance.ts (every law checks every run; this one picks the cases).
import property from "./laws/padding-invariance.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
