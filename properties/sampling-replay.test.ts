// Property suite of the law in laws/sampling-replay.ts (every law checks every run; this one picks the cases).
import property from "./laws/sampling-replay.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
