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

/** The command as an interrupt names it ("run", "golden update"), from argv alone (nothing is loaded yet). */
export function commandLabel(argv: readonly string[]): string {
  const [name, sub] = argv;
  if (name === undefined || !/^[a-z]+$/.test(name)) return "";
  return name === "golden" && sub !== undefined && /^[a-z]+$/.test(sub) ? `golden ${sub}` : name;
}

export interface SignalHandlers {
  /**
   * The command has finished with `code` (its files are written): an interrupt from now on, while node
   * tears down, ends the process with that code and says nothing. It must not claim an interruption.
   */
  finished(code: number): void;
  /** Removes the handlers. */
  remove(): void;
}

/** Installs the handlers for the command named `command` ("run", "golden update"). */
export function installSignalHandlers(command: string, options: SignalOptions = {}): SignalHandlers {
  const stderr = options.stderr ?? process.stderr;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let finishedWith: number | undefined;
  const handlers = (Object.keys(EXIT_SIGNAL) as HandledSignal[]).map((signal) => {
    const handler = (): void => {
      if (finishedWith !== undefined) return exit(finishedWith);
      clearProgressBars();
      stderr.write(`specconf${command ? ` ${command}` : ""}: interrupted by ${signal}; nothing was half-written\n`);
      exit(EXIT_SIGNAL[signal]);
    };
    process.on(signal, handler);
    return { signal, handler };
  });
  return {
    finished(code: number) {
      finishedWith = code;
    },
    remove() {
      for (const { signal, handler } of handlers) process.off(signal, handler);
    },
  };
}
