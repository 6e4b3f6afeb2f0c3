// Property suite of the law in laws/bonus-stride.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/bonus-stride.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
