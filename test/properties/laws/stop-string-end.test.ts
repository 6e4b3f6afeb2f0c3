// Property suite of the law in laws/stop-string-end.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/stop-string-end.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
