// `specconf export --format onnx|hf|gguf --out DIR`: the golden suites' models for other engines.
import { EXPORT_FORMATS, planExport, type ExportFormat } from "../golden/export.ts";
import { runCommandBody } from "../errors/exit.ts";
import { goldenFilesIn, packageGoldenDir } from "../golden/golden-dir.ts";
import { loadGoldenFile } from "../golden/load.ts";
import { join } from "node:path";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { checkOutputPaths, writeOutputFiles } from "./output-paths.ts";

const FLAGS = defineFlags({
  format: {
    type: "choice",
    choices: EXPORT_FORMATS,
    description:
      "onnx: the exact graphs the golden digests name; hf: Llama / EAGLE checkpoints (safetensors); gguf: llama.cpp files (F32)",
  },
  out: { type: "string", valueName: "DIR", description: "output directory (one subdirectory per suite)" },
  golden: {
    type: "string",
    multiple: true,
    valueName: "FILE",
    description: "export this golden file's models (default: every golden/*.json of the package)",
  },
});

export function exportCommand(argv: string[]): Promise<number> {
  return runCommandBody("export", () => exportModels(argv));
}

async function exportModels(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf export --format onnx|hf|gguf --out DIR [--golden FILE]...",
        summary:
          "Write the golden suites' models for other engines: ONNX graphs, Hugging Face checkpoints (target Llama, standalone draft, EAGLE head) or GGUF files for llama.cpp (target, standalone draft). See docs/export.md.",
      }),
    );
    return 0;
  }
  if (!values.format) throw new UsageError("missing --format onnx|hf|gguf", "--format");
  if (!values.out) throw new UsageError("missing --out DIR", "--out");
  const goldenPaths = values.golden.length > 0 ? values.golden : goldenFilesIn(packageGoldenDir(), "--golden");
  const goldens = goldenPaths.map((path) => loadGoldenFile(path));
  checkOutputPaths(
    [{ flag: "--out", path: values.out, kind: "folder" }],
    goldenPaths.map((path) => ({ flag: "--golden", path })),
  );
  // Plan every suite, then write them all at once: nothing is written unless everything can be.
  const plans = goldens.map((golden) => planExport(golden, values.format as ExportFormat));
  const files = plans.flatMap((plan) => [...plan].map(([path, text]) => ({ path: join(values.out!, path), text })));
  writeOutputFiles("--out", files);
  process.stdout.write(`${values.out}: ${files.length} files for ${plans.length} suites (${values.format})\n`);
  return 0;
}
