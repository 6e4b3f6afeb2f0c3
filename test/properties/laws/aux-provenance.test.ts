// Property suite of the law in laws/aux-provenance.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/aux-provenance.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
