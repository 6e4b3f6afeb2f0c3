// Property suite of the law in laws/per-step-pools.ts (every law checks every run; this one picks the cases).
import property from "./laws/per-step-pools.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
