// What the schema cannot check about a request's sampling options: token ids inside the model's
// vocabulary, min new tokens within max new tokens, a logprobs count the vocabulary can serve, a grammar's
// automaton (states in range, deterministic, no dead end; greedy requests only: the reference engine's
// rejection sampler takes no mask).
// ConfigError with the JSON path, as for the rest of a case.
import type { CaseRequest } from "./case.ts";
import { ConfigError } from "./engine-config.ts";
import type { ModelSpec } from "../model/spec.ts";
import { grammarProblem } from "../sampling/grammar.ts";
import { isStochastic } from "../sampling/params.ts";

export function checkSampling(request: CaseRequest, path: string, spec: ModelSpec): void {
  const sampling = request.sampling;
  if (!sampling) return;
  sampling.stopTokenIds?.forEach((token, i) => {
    if (token >= spec.vocab)
      throw new ConfigError(
        `${path}/sampling/stopTokenIds/${i}`,
        `token ${token} is outside the vocabulary (${spec.vocab})`,
      );
  });
  for (const token of Object.keys(sampling.logitBias ?? {})) {
    if (Number(token) >= spec.vocab)
      throw new ConfigError(
        `${path}/sampling/logitBias/${token}`,
        `token ${token} is outside the vocabulary (${spec.vocab})`,
      );
  }
  if ((sampling.minNewTokens ?? 0) > request.maxNewTokens)
    throw new ConfigError(
      `${path}/sampling/minNewTokens`,
      `${sampling.minNewTokens} exceeds maxNewTokens ${request.maxNewTokens}`,
    );
  if (sampling.grammar) {
    const problem = grammarProblem(sampling.grammar, spec.vocab, spec.eosId);
    if (problem) throw new ConfigError(`${path}/sampling/grammar${problem.path}`, problem.message);
    if (isStochastic(sampling))
      throw new ConfigError(`${path}/sampling/grammar`, "a grammar needs greedy decoding (temperature 0)");
  }
  if ((sampling.logprobs ?? 0) > spec.vocab)
    throw new ConfigError(`${path}/sampling/logprobs`, `${sampling.logprobs} exceeds the vocabulary (${spec.vocab})`);
}
