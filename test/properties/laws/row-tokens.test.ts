// Property suite of the law in laws/row-tokens.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/row-tokens.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
