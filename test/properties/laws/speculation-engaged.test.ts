// Property suite of the law in laws/speculation-engaged.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/speculation-engaged.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
