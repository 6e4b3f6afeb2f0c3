// Property suite of the law in laws/placeholder-resolution.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/placeholder-resolution.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
