#!/usr/bin/env node
// npm bin for specconf: registers tsx so the TypeScript sources run directly, then
// hands argv to src/cli/main.ts and exits with the code it returns.
import { register } from "tsx/esm/api";

register();

const { main } = await import("../src/cli/main.ts");
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`specconf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
