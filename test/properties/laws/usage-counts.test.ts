// Property suite of the law in laws/usage-counts.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/usage-counts.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
