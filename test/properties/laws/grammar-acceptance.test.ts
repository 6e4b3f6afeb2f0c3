// Property suite of the law in laws/grammar-acceptance.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/grammar-acceptance.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
