/**
 * specconf CLI entry point. bin/specconf.js calls main() (from source through tsx in a checkout, built JS when
 * installed). `--version`, `help` and `help <command>` are answered here.
 *
 * Subcommands live in COMMANDS below: add an entry { summary, run } to register one.
 * run(argv) receives the arguments after the subcommand name and returns an exit code; each command maps
 * what it throws through src/errors/exit.ts (bad input: exit 2 and one line; a bug: exit 1 and its stack).
 */
import { HELP_WIDTH, wrapText } from "./args.ts";
import { oneLine } from "../errors/exit.ts";
import { packageJson } from "../schema/package-json.ts";

// Commands load on demand: an engine started per case (`specconf adapter`) should not pay for the
// property suites, fast-check and every other command at start-up.
const lazy =
  <M>(load: () => Promise<M>, pick: (module: M) => (argv: string[]) => Promise<number>) =>
  async (argv: string[]) =>
    pick(await load())(argv);

export interface Command {
  /** One-line description shown by `specconf help`. */
  summary: string;
  run(argv: string[]): Promise<number>;
}

export const COMMANDS: Record<string, Command> = {
  run: {
    summary:
      "run a case (default: generated prompts on a preset) in target-only and speculative mode, and check the laws",
    run: lazy(
      () => import("./run.ts"),
      (module) => module.runCommand,
    ),
  },
  golden: {
    summary:
      "golden suites: update (regenerate, explicit only), verify (reference engine against them), dump (reference outputs and traces)",
    run: lazy(
      () => import("./golden.ts"),
      (module) => module.goldenCommand,
    ),
  },
  validate: {
    summary: "check another engine's outputs (JSON Lines) and traces against a golden file",
    run: lazy(
      () => import("./validate.ts"),
      (module) => module.validateCommand,
    ),
  },
  check: {
    summary:
      "run the laws' property suites on generated cases (progress, per-law table, shrunk failures with a replay command)",
    run: lazy(
      () => import("./check.ts"),
      (module) => module.checkCommand,
    ),
  },
  merge: {
    summary: "combine the --json reports of check --shard K/N into one run (verdict, table, coverage, JUnit)",
    run: lazy(
      () => import("./merge.ts"),
      (module) => module.mergeCommand,
    ),
  },
  replay: {
    summary: "rerun a shrunk failure (or a case file) and print its step table with the first offending event marked",
    run: lazy(
      () => import("./replay.ts"),
      (module) => module.replayCommand,
    ),
  },
  report: {
    summary:
      "write one self-contained HTML page for a shrunk failure: verdicts, case, draft tree, step tables, histograms",
    run: lazy(
      () => import("./report.ts"),
      (module) => module.reportCommand,
    ),
  },
  mutants: {
    summary: "switch each named fault on and search until a law fails: kill matrix, shrunk sizes, time to detect",
    run: lazy(
      () => import("./mutants.ts"),
      (module) => module.mutantsCommand,
    ),
  },
  export: {
    summary:
      "write the golden suites' models for other engines: ONNX graphs or Hugging Face checkpoints (Llama target, standalone draft, EAGLE head)",
    run: lazy(
      () => import("./export.ts"),
      (module) => module.exportCommand,
    ),
  },
  adapter: {
    summary: "serve the reference engine over the external-engine protocol (JSON Lines on stdin/stdout)",
    run: lazy(
      () => import("./adapter.ts"),
      (module) => module.adapterCommand,
    ),
  },
  engine: {
    summary:
      "serve a real third-party engine over the external-engine protocol (llama-cpp: llama.cpp on GGUF exports, CPU)",
    run: lazy(
      () => import("./engine.ts"),
      (module) => module.engineCommand,
    ),
  },
};

export function usage(): string {
  const names = [...Object.keys(COMMANDS), "help"];
  const width = Math.max(...names.map((n) => n.length));
  const indent = " ".repeat(2 + width + 2);
  const lines = ["usage: specconf <command> [flags]", "", "commands:"];
  for (const name of names) {
    const text = wrapText(
      name === "help" ? "show this help; help <command>: that command's flags" : COMMANDS[name].summary,
      HELP_WIDTH - indent.length,
    );
    lines.push(`  ${name.padEnd(width)}  ${text[0]}`, ...text.slice(1).map((line) => `${indent}${line}`));
  }
  lines.push(
    "",
    "Run 'specconf help <command>' (or 'specconf <command> --help') for a command's flags;",
    "'specconf --version' for the version.",
  );
  return lines.join("\n") + "\n";
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(`specconf: missing command (try: ${Object.keys(COMMANDS).join(", ")}; specconf help)\n`);
    return 2;
  }
  if (name === "--version") {
    process.stdout.write(`specconf ${packageJson().version}\n`);
    return 0;
  }
  if (name === "help" && rest.length > 0) return helpFor(rest);
  if (name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(usage());
    return 0;
  }
  const command = commandNamed(name);
  return command === undefined ? 2 : command.run(rest);
}

/** `specconf help <command> [subcommand]`: that command's --help (golden's subcommands have their own). */
function helpFor([name, ...rest]: string[]): Promise<number> | number {
  const command = commandNamed(name);
  return command === undefined ? 2 : command.run([...rest, "--help"]);
}

/** The command of that name, or undefined after printing the one-line error (exit 2). */
function commandNamed(name: string): Command | undefined {
  if (Object.hasOwn(COMMANDS, name)) return COMMANDS[name];
  const known = ["run", ...Object.keys(COMMANDS).filter((n) => n !== "run")].join(", ");
  process.stderr.write(`specconf: unknown command '${oneLine(name)}' (try: ${known})\n`);
  return undefined;
}
