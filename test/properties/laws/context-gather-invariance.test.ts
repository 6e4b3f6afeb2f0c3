// Property suite of the law in laws/context-gather-invariance.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/context-gather-invariance.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
