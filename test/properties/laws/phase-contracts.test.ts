// Property suite of the law in laws/phase-contracts.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/phase-contracts.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
