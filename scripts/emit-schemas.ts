// Writes schemas/*.schema.json from the TypeBox definitions (npm run schemas). test/validate/schemas.test.ts
// fails when a checked-in file differs from what this would write.
import { join } from "node:path";
import { publishedSchemas, SCHEMA_DIR } from "../src/validate/published-schemas.ts";
import { writeTextAtomic } from "../src/schema/atomic-write.ts";

for (const [file, text] of publishedSchemas()) {
  writeTextAtomic(join(SCHEMA_DIR, file), text);
  process.stdout.write(`${join(SCHEMA_DIR, file)}\n`);
}
