#!/usr/bin/env node
// npm bin for specconf: catches interrupts from the first moment (a signal that arrives while tsx and the
// handlers load is held, then delivered to them), registers tsx so the TypeScript sources run directly,
// installs the interrupt handlers (exit 130/143, one line, nothing half-written), then hands argv to
// src/cli/main.ts and exits with the code it returns. Commands map their own errors; anything else is a
// bug: exit 1 with its stack.
let held;
const hold = (signal) => (held ??= signal);
process.on("SIGINT", hold);
process.on("SIGTERM", hold);

const { register } = await import("tsx/esm/api");
register();

const argv = process.argv.slice(2);
const { commandLabel, installSignalHandlers } = await import("../src/cli/signals.ts");
const label = commandLabel(argv);
const signals = installSignalHandlers(label);
process.off("SIGINT", hold);
process.off("SIGTERM", hold);
if (held !== undefined) process.kill(process.pid, held);
const { main } = await import("../src/cli/main.ts");
const { reportError } = await import("../src/errors/exit.ts");
try {
  process.exitCode = await main(argv);
} catch (err) {
  process.exitCode = reportError(label, err);
}
signals.finished(process.exitCode);
