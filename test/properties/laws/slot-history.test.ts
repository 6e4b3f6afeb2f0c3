// Property suite of the law in laws/slot-history.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/slot-history.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
