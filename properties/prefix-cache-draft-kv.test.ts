// Property suite of the law in laws/prefix-cache-draft-kv.ts (every law checks every run; this one picks the cases).
import property from "./laws/prefix-cache-draft-kv.ts";
import { lawTest } from "./vitest-law.ts";

lawTest(property);
