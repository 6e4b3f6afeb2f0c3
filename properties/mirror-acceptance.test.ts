// Property suite of the law in laws/mirror-acceptance.ts (every law checks every run; this one picks the cases).
import property from "./laws/mirror-acceptance.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
