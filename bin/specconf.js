#!/usr/bin/env node
// npm bin for specconf: registers tsx so the TypeScript sources run directly, installs the interrupt
// handlers first (exit 130/143, one line, nothing half-written: before them node would die at once), then
// hands argv to src/cli/main.ts and exits with the code it returns. Commands map their own errors;
// anything else is a bug: exit 1 with its stack.
import { register } from "tsx/esm/api";

register();

const argv = process.argv.slice(2);
const { commandLabel, installSignalHandlers } = await import("../src/cli/signals.ts");
const label = commandLabel(argv);
const signals = installSignalHandlers(label);
const { main } = await import("../src/cli/main.ts");
const { reportError } = await import("../src/errors/exit.ts");
try {
  process.exitCode = await main(argv);
} catch (err) {
  process.exitCode = reportError(label, err);
}
signals.finished(process.exitCode);
