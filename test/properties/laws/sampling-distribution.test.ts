// Property suite of the law in laws/sampling-distribution.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/sampling-distribution.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
