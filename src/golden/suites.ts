// The checked-in golden suites: what `specconf golden update` regenerates. One model (target + draft)
// per suite; each case has its own seeded workload (workloads differ, so a trace can be matched to its
// case by its requests). Keep them small: `golden verify` runs in `npm test`.
import type { EngineConfig } from "../case/engine-config.ts";
import type { Dtype, DraftKind, DraftSpec } from "../model/spec.ts";
import type { SamplingParams } from "../sampling/params.ts";

export interface GoldenCaseDefinition {
  name: string;
  description: string;
  /** Prompt generator seed (preamble + 1..16 seeded tokens per request). */
  seed: number;
  requests: number;
  maxNewTokens: number;
  engine: Partial<EngineConfig>;
  /** Every request arrives before the first step (engines without a step scheduler can run the case). */
  arriveTogether?: boolean;
  /** Request i's sampling options (stop ids, min tokens, penalties, bias, logprobs). */
  sampling?: readonly SamplingParams[];
}

export interface GoldenSuiteDefinition {
  suite: string;
  description: string;
  preset: string;
  dtype?: Dtype;
  draft: DraftKind;
  /** EAGLE-3 checkpoint options of the draft (norm_before_fc). */
  draftOptions?: Pick<DraftSpec, "normBeforeFc">;
  cases: GoldenCaseDefinition[];
}

export const GOLDEN_SUITES: readonly GoldenSuiteDefinition[] = [
  {
    suite: "tiny-plain",
    description:
      "tiny target with the mirror draft in the plainest setting any engine runs: requests arriving together, whole-prompt prefill, page size 1, chains. Other engines run the standalone draft (a copy of the target) in draft-model mode, or target-only.",
    preset: "tiny",
    draft: "mirror",
    cases: [
      {
        name: "single",
        description: "one request, S = 3, up to 16 tokens",
        seed: 111,
        requests: 1,
        maxNewTokens: 16,
        engine: { numSteps: 3 },
        arriveTogether: true,
      },
      {
        name: "batch",
        description: "three requests arriving together, S = 2, up to 12 tokens",
        seed: 112,
        requests: 3,
        maxNewTokens: 12,
        engine: { numSteps: 2 },
        arriveTogether: true,
      },
    ],
  },
  {
    suite: "tiny-mirror",
    description:
      "tiny target (vocab 64, hidden 32, 2 layers, GQA 4/2) with the mirror draft: every uncut round accepts all S drafts. Other engines run the exported standalone draft (a copy of the target) in draft-model mode and must match.",
    preset: "tiny",
    draft: "mirror",
    cases: [
      {
        name: "unchunked",
        description: "4 requests arriving over 3 steps, S = 3, whole-prompt prefill",
        seed: 101,
        requests: 4,
        maxNewTokens: 16,
        engine: { numSteps: 3 },
      },
      {
        name: "chunked-paged",
        description: "chunk 3, page 4, token budget 8: chunk tails near the prompt end, verify across page boundaries",
        seed: 102,
        requests: 4,
        maxNewTokens: 16,
        engine: { numSteps: 3, chunkSize: 3, pageSize: 4, tokenBudget: 8 },
      },
      {
        name: "tree",
        description: "tree drafting: topk 2, 6 verify rows per request (N > S + 1, so the bonus stride matters), S = 3",
        seed: 107,
        requests: 3,
        maxNewTokens: 12,
        engine: { numSteps: 3, topk: 2, numDraftTokens: 6 },
      },
      {
        name: "sampling",
        description:
          "per-request sampling options, S = 3: a stop id inside the accepted run that reaches the cap (request 0), presence and frequency penalties (1), repetition penalty, a logit bias and min new tokens over a stop id that follows them (2), a banned and a favoured token with a frequency penalty (3); logprobs on every request",
        seed: 108,
        requests: 4,
        maxNewTokens: 12,
        engine: { numSteps: 3 },
        sampling: [
          { stopTokenIds: [44], logprobs: 2 },
          { presencePenalty: 1, frequencyPenalty: 0.5, logprobs: 0 },
          { repetitionPenalty: 1.5, logitBias: { "52": 5 }, minNewTokens: 6, stopTokenIds: [7], logprobs: 1 },
          { logitBias: { "57": -100, "28": 4 }, frequencyPenalty: 1, logprobs: 3 },
        ],
      },
      {
        name: "scheduled",
        description:
          "production scheduling (docs/scheduling.md): overlap, the prefix cache (later arrivals reuse the shared preamble's target and draft KV, page 2) and padded graph replay on buckets 1, 2, 4, 8, 16; S = 3. An engine that does not declare these modes skips it",
        seed: 109,
        requests: 4,
        maxNewTokens: 12,
        engine: {
          numSteps: 3,
          pageSize: 2,
          overlap: true,
          prefixCache: true,
          graphReplay: true,
          graphBuckets: [1, 2, 4, 8, 16],
        },
      },
    ],
  },
  {
    suite: "tiny-eagle",
    description:
      "tiny target with an EAGLE head in the checkpoint layout (fc with bias over concat(embedding, hidden), one decoder layer without input norm, the target's LM head).",
    preset: "tiny",
    draft: "eagle",
    cases: [
      {
        name: "chunked",
        description: "chunk 3, page 2, S = 3: the first-round drafts depend on every chunk tail's draft-extend row",
        seed: 103,
        requests: 4,
        maxNewTokens: 12,
        engine: { numSteps: 3, chunkSize: 3, pageSize: 2 },
      },
      {
        name: "unchunked-s2",
        description: "whole-prompt prefill, S = 2",
        seed: 104,
        requests: 3,
        maxNewTokens: 12,
        engine: { numSteps: 2 },
      },
    ],
  },
  {
    suite: "small-gqa-mirror",
    description:
      "small-gqa target (vocab 48, hidden 64, 3 layers, GQA 8/2) whose EOS is likely, with the mirror draft.",
    preset: "small-gqa",
    draft: "mirror",
    cases: [
      {
        name: "chunked-eos",
        description: "chunk 5, S = 2, up to 24 tokens: requests finish by EOS and by length",
        seed: 105,
        requests: 3,
        maxNewTokens: 24,
        engine: { numSteps: 2, chunkSize: 5 },
      },
    ],
  },
  {
    suite: "small-gqa-eagle3",
    description:
      "small-gqa target (3 layers) with an EAGLE-3 head in the checkpoint layout (LlamaForCausalLMEagle3): fc over the inputs of layers 0, 1 and 2 (auxiliary ids 0, 1, 2: the embeddings, the outputs of layers 0 and 1) with norm_before_fc, one midlayer over concat(embedding, hidden), its own vocabulary of 24 ids mapped to target ids by d2t. Its drafts are target ids only through d2t, and depend on every auxiliary layer.",
    preset: "small-gqa",
    draft: "eagle3",
    draftOptions: { normBeforeFc: true },
    cases: [
      {
        name: "chunked",
        description: "chunk 3, S = 3: the first-round drafts depend on every chunk tail's auxiliary states",
        seed: 108,
        requests: 3,
        maxNewTokens: 10,
        engine: { numSteps: 3, chunkSize: 3 },
      },
      {
        name: "tree",
        description: "tree drafting: topk 2, 5 verify rows per request, S = 2 (every child a d2t image)",
        seed: 109,
        requests: 2,
        maxNewTokens: 10,
        engine: { numSteps: 2, topk: 2, numDraftTokens: 5 },
      },
    ],
  },
  {
    suite: "tiny-f64-eagle",
    description: "tiny target in float64 (epsilon 1e-9) with an EAGLE head.",
    preset: "tiny-f64",
    draft: "eagle",
    cases: [
      {
        name: "chunked",
        description: "chunk 4, S = 3",
        seed: 106,
        requests: 3,
        maxNewTokens: 12,
        engine: { numSteps: 3, chunkSize: 4 },
      },
    ],
  },
  {
    suite: "swa-mirror",
    description:
      "Issue 29's sliding-window family: preset swa (layer 0 attends a window of 4 positions, layer 1 everything; YaRN-scaled RoPE, factor 4 over 16 positions) with the mirror draft. Prompts are longer than the window; exported as MinistralForCausalLM (layer_types) and llama.cpp granite_swa.",
    preset: "swa",
    draft: "mirror",
    cases: [
      {
        name: "batch",
        // 14, not 16: request 1's 15th token is a near-tie (margin 2e-4), which a golden file must not hold.
        description: "three requests arriving together, whole-prompt prefill, S = 3, up to 14 tokens",
        seed: 121,
        requests: 3,
        maxNewTokens: 14,
        engine: { numSteps: 3 },
        arriveTogether: true,
      },
    ],
  },
  {
    suite: "swa-f64-mirror",
    description:
      "preset swa-f64 (every one of 3 layers attends a window of 3 positions; linearly scaled RoPE, factor 2; float64) with the mirror draft.",
    preset: "swa-f64",
    draft: "mirror",
    cases: [
      {
        name: "batch",
        description: "two requests arriving together, whole-prompt prefill, S = 2, up to 12 tokens",
        seed: 122,
        requests: 2,
        maxNewTokens: 12,
        engine: { numSteps: 2 },
        arriveTogether: true,
      },
    ],
  },
  {
    suite: "hybrid-mirror",
    description:
      "Issue 29's hybrid family: preset hybrid (Mamba2 blocks on layers 0 and 2 around an attention layer) with the mirror draft; exported as GraniteMoeHybridForCausalLM.",
    preset: "hybrid",
    draft: "mirror",
    cases: [
      {
        name: "batch",
        description: "three requests arriving together, whole-prompt prefill, S = 3, up to 16 tokens",
        seed: 123,
        requests: 3,
        maxNewTokens: 16,
        engine: { numSteps: 3 },
        arriveTogether: true,
      },
    ],
  },
];

export function suiteNames(): string[] {
  return GOLDEN_SUITES.map((suite) => suite.suite);
}
