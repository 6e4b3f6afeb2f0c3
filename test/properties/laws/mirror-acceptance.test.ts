// Property suite of the law in laws/mirror-acceptance.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/mirror-acceptance.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
