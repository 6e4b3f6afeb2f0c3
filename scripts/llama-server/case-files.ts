// The GGUF files of a case, as the llama-server engine gets them: the same content-addressed model cache
// (src/sources/model-cache.ts: <onnx digest>.v<export version>.gguf under DIR/gguf/), written without running an
// engine, so a finding's llama-server command line can be run by hand from a fresh clone (docs/findings/).
// Prints one line per file: "target PATH" and, for a speculative case with a model draft, "draft PATH".
//   npx tsx scripts/llama-server/case-files.ts CASE.json [--models DIR]    (DIR defaults to .specconf/models)
import { loadCaseFile } from "../../src/case/load.ts";
import { DEFAULT_MODEL_CACHE, ModelCache } from "../../src/sources/model-cache.ts";

const args = process.argv.slice(2);
const at = args.indexOf("--models");
const models = at >= 0 ? args[at + 1] : DEFAULT_MODEL_CACHE;
const cases = args.filter((_, index) => at < 0 || (index !== at && index !== at + 1));
if (cases.length === 0 || models === undefined) {
  process.stderr.write("usage: npx tsx scripts/llama-server/case-files.ts CASE.json... [--models DIR]\n");
  process.exit(2);
}
const cache = new ModelCache(models);
for (const path of cases) {
  const gguf = cache.files(loadCaseFile(path), ["gguf"]).gguf;
  if (!gguf) {
    process.stderr.write(`${path}: llama.cpp's format cannot carry this case's draft\n`);
    process.exit(1);
  }
  process.stdout.write(`target ${gguf.target}\n${gguf.draft ? `draft ${gguf.draft}\n` : ""}`);
}
