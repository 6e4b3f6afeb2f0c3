// `specconf export --format onnx|hf|gguf --out DIR`: the golden suites' models for other engines.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { EXPORT_FORMATS, planExport, writeExport, type ExportFormat } from "../export/export.ts";
import { loadGoldenFile } from "../golden/load.ts";
import { InputError } from "../schema/input-error.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { DEFAULT_GOLDEN_DIR } from "./golden.ts";

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
    description: "export this golden file's models (default: every golden/*.json)",
  },
});

export async function exportCommand(argv: string[]): Promise<number> {
  try {
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
    const goldenPaths =
      values.golden.length > 0
        ? values.golden
        : readdirSync(DEFAULT_GOLDEN_DIR)
            .filter((name) => name.endsWith(".json"))
            .sort()
            .map((name) => join(DEFAULT_GOLDEN_DIR, name));
    // Plan every suite before writing anything: bad input leaves the output directory untouched.
    const plans = goldenPaths.map((path) => planExport(loadGoldenFile(path), values.format as ExportFormat));
    let count = 0;
    for (const plan of plans) count += writeExport(values.out, plan).length;
    process.stdout.write(`${values.out}: ${count} files for ${plans.length} suites (${values.format})\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof InputError) {
      process.stderr.write(`specconf export: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
