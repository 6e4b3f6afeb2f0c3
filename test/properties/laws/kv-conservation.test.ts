// Property suite of the law in laws/kv-conservation.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/kv-conservation.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
