// `specconf adapter`: the reference engine on stdin/stdout, speaking the external-engine protocol
// (docs/adapter.md). Point `specconf check --engine "npx specconf adapter"` at it, or use it as the model
// for wrapping another engine.
import { serve } from "../adapter/server.ts";
import { FAULT_NAMES, type FaultName } from "../case/faults.ts";
import { runCommandBody } from "../errors/exit.ts";
import { defineFlags, parseFlags, renderHelp } from "./args.ts";

const FLAGS = defineFlags({
  fault: {
    type: "choice",
    choices: FAULT_NAMES,
    multiple: true,
    description: "switch a named fault on in every case (a broken engine behind the protocol)",
  },
});

export function adapterCommand(argv: string[]): Promise<number> {
  return runCommandBody("adapter", () => adapter(argv));
}

async function adapter(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf adapter [--fault NAME]...",
        summary:
          "Serve the reference engine over the external-engine protocol: one JSON request per stdin line, one JSON response per stdout line (docs/adapter.md).",
      }),
    );
    return 0;
  }
  await serve(process.stdin, process.stdout, {
    faults: values.fault as FaultName[],
    log: (message) => process.stderr.write(`specconf adapter: ${message}\n`),
  });
  return 0;
}
