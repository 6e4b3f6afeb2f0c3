// Property suite of the law in laws/acceptance-correctness.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/acceptance-correctness.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
