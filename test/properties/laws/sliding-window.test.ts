// Property suite of the law in laws/sliding-window.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/sliding-window.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
