// Property suite of the law in laws/draft-vocabulary.ts (every law checks every run; this one picks the cases).
import property from "../../../src/properties/laws/draft-vocabulary.ts";
import { lawTest } from "../../helpers/vitest-law.ts";

lawTest(property);
