// Property suite of the law in laws/stop-trim.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/stop-trim.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
