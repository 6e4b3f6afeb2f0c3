import { defaultEngineConfig } from "../src/case/engine-config.ts";
import { defaultDraftSpec } from "../src/model/spec.ts";
import { checkLaws } from "../src/check/runner.ts";
import { referenceSource } from "../src/sources/reference.ts";
import { FAULT_NAMES } from "../src/case/faults.ts";
const prompts = [
  [1, 5, 9, 13, 17, 3, 4, 8],
  [1, 5, 9, 13, 17, 22, 7],
  [1, 5, 9, 13, 17, 30, 31, 32, 33, 34, 35, 36],
];
// Sampling options so the request-semantics faults have something to break (stop ids, min tokens,
// penalties, bias, logprobs).
const sampling = [
  { presencePenalty: 1, logprobs: 1 },
  { minNewTokens: 8, stopTokenIds: [52, 33] },
  { logitBias: { "23": 5 }, repetitionPenalty: 1.5, logprobs: 0 },
];
const requests = prompts.map((prompt, id) => ({
  id,
  prompt,
  maxNewTokens: 20,
  arrivalStep: 0,
  sampling: sampling[id],
}));
const faults = [undefined, ...FAULT_NAMES];
for (const kind of ["mirror", "tapped-mirror", "noisy-mirror", "eagle", "eagle3", "eagle3-mirror"] as const) {
  const base = {
    formatVersion: 1 as const,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(kind),
    workload: { requests, aborts: [] },
  };
  for (const fault of faults) {
    const c = {
      ...base,
      engine: defaultEngineConfig({
        mode: "speculative",
        numSteps: 3,
        chunkSize: 3,
        pageSize: 4,
        faults: fault ? [fault] : [],
      }),
    };
    const t0 = performance.now();
    const laws = (await checkLaws(referenceSource(), c)).results;
    console.log(
      kind.padEnd(14),
      (fault ?? "none").padEnd(31),
      laws
        .map(
          (l) =>
            `${l.law}:${l.status === "holds" ? "ok" : l.status === "fails" ? "FAIL" : "n/a"}${l.ties ? `(ties ${l.ties})` : ""}`,
        )
        .join(" "),
      Math.round(performance.now() - t0) + "ms",
    );
  }
}
