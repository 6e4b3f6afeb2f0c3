// Property suite of the law in laws/lossless.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/lossless.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
