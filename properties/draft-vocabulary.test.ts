// Property suite of the law in laws/draft-vocabulary.ts (every law checks every run; this one picks the cases).
import property from "./laws/draft-vocabulary.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
