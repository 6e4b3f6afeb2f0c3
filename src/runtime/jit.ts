// V8's tiering for a checking process. A check runs hundreds of generated cases through one engine and two
// dozen laws; each new case brings objects V8 has not seen at a given site yet (a trace with aborts, a tree
// round, a float64 model), so a function optimized early on the first cases' type feedback is deoptimized
// and compiled again when later cases arrive: in a 300-run check, about half of TurboFan's compile time
// (some 4 CPU-seconds, on background threads that count against the process) went to recompiling the same
// few dozen functions. Letting functions run longer in the interpreter and baseline code before V8 considers
// them for optimization (its interrupt budget: bytecode executed between tiering checks) means they are
// optimized once, on feedback that has settled. Measured with scripts/bench-laws.ts (`--runs 300 --workers 1`,
// README Benchmarks): about 10% less process CPU, the main thread's time unchanged.
//
// It is a tuning of V8's heuristics, not of what runs: every run, law and forward is the same, and a user's
// own --interrupt-budget (node's command line) wins.
import { setFlagsFromString } from "node:v8";

/** V8's interrupt budget for a checking process (Node 20's V8 default: 67,584). */
export const CHECK_INTERRUPT_BUDGET = 500_000;

/** Mutates the process's V8 flags: call it first thing in a process that checks cases. */
export function tuneJitForChecking(): void {
  if (process.execArgv.some((arg) => arg.startsWith("--interrupt-budget"))) return;
  setFlagsFromString(`--interrupt-budget=${CHECK_INTERRUPT_BUDGET}`);
}
