// Property suite of the law in laws/draft-reference.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/draft-reference.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
