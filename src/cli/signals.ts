// Interrupts: SIGINT (Ctrl-C) and SIGTERM end a command with exit 130 / 143 and one line on stderr, after
// clearing any progress bar. Every file specconf writes is written synchronously to a temp file and
// renamed (src/schema/atomic-write.ts), and JavaScript runs a signal handler only between two pieces of
// synchronous work, so an interrupt lands before or after a write (or a whole set of writes, as in
// `golden update`), never inside one: nothing is left half-written and no temp file stays behind.
// Without a handler node would die at once, possibly between a temp file's creation and its rename.
import { EXIT_SIGNAL } from "../errors/exit.ts";
import { clearProgressBars } from "./progress.ts";

export type HandledSignal = keyof typeof EXIT_SIGNAL;

export interface SignalOptions {
  stderr?: { write(text: string): unknown };
  /** How the process ends (default process.exit); tests pass a recorder. */
  exit?: (code: number) => void;
}

/** Installs the handlers for the command named `command` ("run", "golden update"); returns their removal. */
export function installSignalHandlers(command: string, options: SignalOptions = {}): () => void {
  const stderr = options.stderr ?? process.stderr;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const handlers = (Object.keys(EXIT_SIGNAL) as HandledSignal[]).map((signal) => {
    const handler = (): void => {
      clearProgressBars();
      stderr.write(`specconf${command ? ` ${command}` : ""}: interrupted by ${signal}; nothing was half-written\n`);
      exit(EXIT_SIGNAL[signal]);
    };
    process.on(signal, handler);
    return { signal, handler };
  });
  return () => {
    for (const { signal, handler } of handlers) process.off(signal, handler);
  };
}
