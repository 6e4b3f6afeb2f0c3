// `specconf engine <name>`: a real third-party engine behind the external-engine protocol, for
// `specconf check --engine "npx specconf engine llama-cpp ..."`: llama-cpp (llama.cpp through node-llama-cpp,
// docs/llama-cpp.md) and llama-server (llama.cpp's own server and C++ speculative decoding, built from the
// source npm ships: docs/llama-server.md; `--build` builds it). Logs go to stderr; returns when stdin closes.
import { BadInputError } from "../errors/bad-input.ts";
import { runCommandBody } from "../errors/exit.ts";
import { packageJson } from "../schema/package-json.ts";
import { defineFlags, parseFlags, renderHelp, UsageError, type ParsedFlags } from "./args.ts";

const ENGINES = ["llama-cpp", "llama-server"] as const;

const FLAGS = defineFlags({
  models: {
    type: "string",
    valueName: "DIR",
    description:
      "GGUF files named <onnx digest>.v<export version>.gguf, for requests that name no files (models.files.gguf)",
  },
  "write-missing": {
    type: "boolean",
    description: "export absent <digest>.v<export version>.gguf files under --models from the request's case spec",
  },
  threads: { type: "integer", min: 1, default: 1, description: "llama.cpp CPU threads per context" },
  build: {
    type: "boolean",
    description:
      "llama-server: build it (or reuse the cached build) from the shipped llama.cpp source, print its path, exit",
  },
  binary: {
    type: "string",
    valueName: "FILE",
    description: "llama-server: run this binary instead of the cached build",
  },
  patch: {
    type: "string",
    valueName: "FILE",
    description: "llama-server: with --build, build the source with this patch applied (a deliberately broken build)",
  },
  "case-timeout": {
    type: "integer",
    min: 1,
    default: 60,
    description: "llama-server: seconds one case may take before its server is killed and restarted",
  },
  "server-flag": {
    type: "string",
    multiple: true,
    valueName: "ARG",
    description:
      "llama-server: one more argument for every server it starts, after specconf's own (repeat it; write --server-flag=--no-spec-draft-backend-sampling)",
  },
  "log-rounds": {
    type: "boolean",
    description: "write every request's speculative rounds (drafts, validated, produced tokens) to stderr",
  },
});

const USAGE =
  "specconf engine llama-cpp [--models DIR [--write-missing]] [--threads N] [--log-rounds]\n       specconf engine llama-server [--build [--patch FILE]] [--binary FILE] [--models DIR [--write-missing]] [--case-timeout S] [--server-flag=ARG]...";

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
  const log = (message: string) => process.stderr.write(`specconf engine ${name}: ${message}`);
  if (name === "llama-server") return llamaServer(values, log);
  const { serveLlama } = await importLlamaCpp();
  await serveLlama(process.stdin, process.stdout, {
    modelsDir: values.models,
    writeMissing: values["write-missing"],
    threads: values.threads,
    logRounds: values["log-rounds"],
    log,
  });
  return 0;
}

async function llamaServer(
  values: ParsedFlags<typeof FLAGS>["values"],
  log: (message: string) => void,
): Promise<number> {
  const { buildBinary, resolveBinary } = await import("../adapter/llama-server/binary.ts");
  if (values.build) {
    const path = await buildBinary({ patch: values.patch, log: (text) => process.stderr.write(text) });
    process.stdout.write(`${path}\n`);
    return 0;
  }
  if (values.patch)
    throw new UsageError("--patch needs --build (then run the printed binary with --binary)", "--patch");
  const { serveLlamaServer } = await import("../adapter/llama-server/serve.ts");
  await serveLlamaServer(process.stdin, process.stdout, {
    binary: resolveBinary(values.binary),
    modelsDir: values.models,
    writeMissing: values["write-missing"],
    caseTimeoutMs: values["case-timeout"] * 1000,
    serverFlags: values["server-flag"] ?? [],
    log,
  });
  return 0;
}

/**
 * The llama-cpp engine, imported here: node-llama-cpp takes seconds to load and no other command needs it. It
 * is an optional peer dependency of the installed package (710 MB of prebuilt binaries that an engine team
 * checking its own engine never loads); missing, the error says how to add it.
 */
async function importLlamaCpp(): Promise<typeof import("../adapter/llama-cpp/server.ts")> {
  try {
    return await import("../adapter/llama-cpp/server.ts");
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND";
    if (!missing || !String((error as Error).message).includes("'node-llama-cpp'")) throw error;
    const version = packageJson().peerDependencies?.["node-llama-cpp"] ?? "";
    throw new BadInputError(
      `the llama-cpp engine needs node-llama-cpp, an optional peer dependency: npm install node-llama-cpp@${version}`,
    );
  }
}
