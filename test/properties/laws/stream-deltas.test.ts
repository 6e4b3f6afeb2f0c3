// Property suite of the law in laws/stream-deltas.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/stream-deltas.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
