// `specconf export --format onnx|hf|gguf --out DIR`: the golden suites' models for other engines.
import { EXPORT_FORMATS, exportGap, planExport, type ExportFormat } from "../golden/export.ts";
import type { Golden } from "../golden/schema.ts";
import { BadInputError } from "../errors/bad-input.ts";
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
          "Write the golden suites' models for other engines: ONNX graphs, Hugging Face checkpoints (target Llama, standalone draft, EAGLE head) or GGUF files for llama.cpp (target, standalone draft). With no --golden, a suite the format cannot carry is skipped and listed with the reason, and the rest are written (exit 0; exit 1 when nothing was); a --golden suite it cannot carry is bad input (exit 2, nothing written). See docs/export.md.",
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
  // With no suite named, a suite the format cannot carry is skipped and listed; a named one is bad input (exit 2).
  // Plan every exported suite, then write them all at once: nothing is written unless everything can be.
  const named = values.golden.length > 0;
  const format = values.format as ExportFormat;
  const skipped = named ? [] : goldens.flatMap((golden) => skipLine(golden, format));
  const plans = goldens.flatMap((golden, i) => {
    if (!named && exportGap(golden, format)) return [];
    try {
      return [planExport(golden, format)];
    } catch (error) {
      throw error instanceof BadInputError ? error.inFile(goldenPaths[i]) : error;
    }
  });
  if (plans.length === 0) {
    for (const line of skipped) process.stdout.write(line);
    process.stderr.write(`specconf export: nothing exported: no suite has a ${format} form\n`);
    return 1;
  }
  const files = plans.flatMap((plan) => [...plan].map(([path, text]) => ({ path: join(values.out!, path), text })));
  writeOutputFiles("--out", files);
  for (const line of skipped) process.stdout.write(line);
  const skips = skipped.length > 0 ? `; ${skipped.length} skipped` : "";
  process.stdout.write(`${values.out}: ${files.length} files for ${plans.length} suites (${format})${skips}\n`);
  return 0;
}

/** The line listing a suite the format cannot carry (none when it can). */
function skipLine(golden: Golden, format: ExportFormat): string[] {
  const gap = exportGap(golden, format);
  return gap ? [`skipped ${golden.suite}: ${gap.reason}\n`] : [];
}
