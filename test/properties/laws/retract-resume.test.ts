// Property suite of the law in laws/retract-resume.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/retract-resume.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
