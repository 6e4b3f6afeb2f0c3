// Property suite of the law in laws/padding-invariance.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/padding-invariance.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
