// Property suite of the law in laws/abort-finality.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/abort-finality.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
