#!/usr/bin/env node
// npm bin for specconf: catches interrupts from the first moment (a signal that arrives while the handlers
// load is held, then delivered to them), installs the interrupt handlers (exit 130/143, one line, nothing
// half-written), then hands argv to the CLI's main() and exits with the code it returns. Commands map their
// own errors; anything else is a bug: exit 1 with its stack.
//
// Which code runs: a checkout (src/ beside bin/) always runs its TypeScript sources through tsx, so a stale
// dist/ from an earlier `npm pack` never shadows the source in tests or development; the installed package
// ships dist/ (built by `npm run build`, which `npm pack` runs as prepack) and no src/, and runs the built
// JavaScript under plain node, without tsx.
import { existsSync } from "node:fs";

let held;
const hold = (signal) => (held ??= signal);
process.on("SIGINT", hold);
process.on("SIGTERM", hold);

const fromSource = existsSync(new URL("../src/cli/main.ts", import.meta.url));
if (fromSource) {
  const { register } = await import("tsx/esm/api");
  register();
}
const code = (path) => (fromSource ? `../src/${path}.ts` : `../dist/${path}.js`);

const argv = process.argv.slice(2);
const { commandLabel, installSignalHandlers } = await import(code("cli/signals"));
const label = commandLabel(argv);
const signals = installSignalHandlers(label);
process.off("SIGINT", hold);
process.off("SIGTERM", hold);
if (held !== undefined) process.kill(process.pid, held);
const { main } = await import(code("cli/main"));
const { reportError } = await import(code("errors/exit"));
try {
  process.exitCode = await main(argv);
} catch (err) {
  process.exitCode = reportError(label, err);
}
signals.finished(process.exitCode);
