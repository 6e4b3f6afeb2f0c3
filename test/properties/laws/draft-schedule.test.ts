// Property suite of the law in laws/draft-schedule.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/draft-schedule.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
