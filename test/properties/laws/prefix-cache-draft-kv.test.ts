// Property suite of the law in laws/prefix-cache-draft-kv.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/prefix-cache-draft-kv.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
