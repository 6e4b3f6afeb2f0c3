// Property suite of the law in laws/per-step-pools.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/per-step-pools.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
