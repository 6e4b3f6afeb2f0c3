// `specconf engine <name>`: a real third-party engine behind the external-engine protocol, for
// `specconf check --engine "npx specconf engine llama-cpp ..."`. Only llama-cpp exists (llama.cpp through
// node-llama-cpp, docs/llama-cpp.md). Logs go to stderr; the command returns when stdin closes.
import { runCommandBody } from "../errors/exit.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";

const ENGINES = ["llama-cpp"] as const;

const FLAGS = defineFlags({
  models: {
    type: "string",
    valueName: "DIR",
    description: "GGUF files named <onnx digest>.gguf, for requests that name no files (models.files.gguf)",
  },
  "write-missing": {
    type: "boolean",
    description: "export absent <digest>.gguf files under --models from the request's case spec",
  },
  threads: { type: "integer", min: 1, default: 1, description: "llama.cpp CPU threads per context" },
  "log-rounds": {
    type: "boolean",
    description: "write every request's speculative rounds (drafts, validated, produced tokens) to stderr",
  },
});

const USAGE = "specconf engine llama-cpp [--models DIR [--write-missing]] [--threads N] [--log-rounds]";

export function engineCommand(argv: string[]): Promise<number> {
  return runCommandBody("engine", () => engine(argv));
}

async function engine(argv: string[]): Promise<number> {
  const { values, positionals, help } = parseFlags(FLAGS, argv, { allowPositionals: true });
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: USAGE,
        summary:
          "Serve a real engine over the external-engine protocol (JSON Lines on stdin/stdout): llama-cpp runs the case's GGUF exports on llama.cpp's prebuilt CPU binary (docs/llama-cpp.md).",
      }),
    );
    return 0;
  }
  const [name, ...extra] = positionals;
  if (name === undefined) throw new UsageError(`missing engine name (one of: ${ENGINES.join(", ")})`);
  if (!(ENGINES as readonly string[]).includes(name))
    throw new UsageError(`unknown engine '${name}' (one of: ${ENGINES.join(", ")})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (values["write-missing"] && !values.models) throw new UsageError("--write-missing needs --models DIR", "--models");
  // Imported here: node-llama-cpp takes seconds to load, and no other command needs it.
  const { serveLlama } = await import("../adapter/llama-cpp/server.ts");
  await serveLlama(process.stdin, process.stdout, {
    modelsDir: values.models,
    writeMissing: values["write-missing"],
    threads: values.threads,
    logRounds: values["log-rounds"],
    log: (message) => process.stderr.write(`specconf engine ${name}: ${message}`),
  });
  return 0;
}
