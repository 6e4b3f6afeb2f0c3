// Property suite of the law in laws/processing-parity.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/processing-parity.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
