// The name an export of a model is cached under: its ONNX graph's digest, and the BOS and EOS ids where they are
// not the presets' 1 and 2. The exports carry those ids (GGUF tokenizer.ggml.bos_token_id / eos_token_id and the
// control tokens' types, HF config.json / generation_config.json / tokenizer.json) but the graph does not: two
// specs differing only there (arbitraries/spec-variants.ts draws them) build the same graph, and one cached file
// named by the digest alone would hand an engine the other spec's EOS. The presets' ids add nothing, so every
// name a preset's export had stays as it was (model caches, golden files).
import type { ModelSpec } from "../model/spec.ts";

/** The digest, tagged with the control ids when they are not 1 and 2. */
export function exportStem(digest: string, spec: Pick<ModelSpec, "bosId" | "eosId">): string {
  return spec.bosId === 1 && spec.eosId === 2 ? digest : `${digest}.bos${spec.bosId}-eos${spec.eosId}`;
}
