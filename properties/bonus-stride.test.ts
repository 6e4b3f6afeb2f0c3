// Property suite of the law in laws/bonus-stride.ts (every law checks every run; this one picks the cases).
import property from "./laws/bonus-stride.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
