// Property suite of the law in laws/reference-decode.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/reference-decode.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
