// One request on llama-server's POST /completion, as token ids (BOS included by the case), pinned to its own
// slot (id_slot), greedy through the one-sampler chain ["top_k"] with top_k 1 (the argmax; ties to the lower
// id), or the temperature chain for a stochastic request; n_predict is maxNewTokens, cache_prompt the case's
// prefixCache (S is the server's flag: launch.ts). A request the case aborts is streamed (stream: true, one
// server-sent event per token, the last one with the stop type and the totals) so that closing the connection
// cancels it mid-flight: the server polls the connection (server-http.cpp hands httplib's is_connection_closed
// to the handler as should_stop) and, once it is closed, server_response_reader::stop() posts a
// SERVER_TASK_TYPE_CANCEL at the front of the task queue, which releases the slot (server-context.cpp). What
// was received before the close is the request's output, finish reason abort. A request with stop strings (the
// text layer) is streamed too: its events are its deltas (run-case.ts).
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Case, CaseRequest } from "../../case/case.ts";
import { resolveModelSpec } from "../../case/models.ts";
import { isStochastic } from "../../sampling/params.ts";
import type { ServerProcess } from "./process.ts";
import { gbnfOf } from "./grammar.ts";

export interface ProbabilityEntry {
  id: number;
  logprob: number;
  top_logprobs: { id: number; logprob: number }[];
}

export interface ServerReply {
  tokens: number[];
  stop_type: string;
  tokens_cached?: number;
  timings?: { draft_n?: number; draft_n_accepted?: number };
  completion_probabilities?: ProbabilityEntry[];
  /** Set when the connection was closed (the case's abort) before the server's final event. */
  aborted?: boolean;
  /** The stop string that ended it (stop type "word"). */
  stopping_word?: string;
  /** Output tokens it counts (n_decoded) and prompt tokens (the prompt's length). */
  tokens_predicted?: number;
  tokens_evaluated?: number;
  /** A streamed reply's events in order: the text each released and the tokens it carried. */
  deltas?: { text: string; tokens: number[] }[];
}

/** The /completion body of one request (exported for the reproducers in docs/findings: the same JSON). */
export function completionBody(testCase: Case, request: CaseRequest, slot: number): Record<string, unknown> {
  const sampling = request.sampling;
  const body: Record<string, unknown> = {
    prompt: request.prompt,
    n_predict: request.maxNewTokens,
    return_tokens: true,
    cache_prompt: testCase.engine.prefixCache === true,
    id_slot: slot,
  };
  // The repetition penalty as vLLM defines it (every token of the prompt and the output seen so far): llama.cpp's
  // penalties sampler counts the tokens its sampler accepted, which are the prompt's and then the output's,
  // over a window of repeat_last_n; a window of the model's positions holds them all. It runs after the logit
  // bias (a sampler of its own, first in the chain) and before temperature, vLLM's order.
  const penalties = sampling?.repetitionPenalty !== undefined && sampling.repetitionPenalty !== 1;
  if (penalties)
    Object.assign(body, {
      repeat_penalty: sampling!.repetitionPenalty,
      repeat_last_n: resolveModelSpec(testCase.model).maxPositions,
      frequency_penalty: 0,
      presence_penalty: 0,
    });
  const chain = penalties ? ["penalties"] : [];
  if (isStochastic(sampling)) {
    Object.assign(body, {
      samplers: [...chain, "temperature"],
      temperature: sampling!.temperature,
      seed: sampling!.seed ?? request.id,
    });
  } else Object.assign(body, { samplers: [...chain, "top_k"], top_k: 1 });
  if (sampling?.logitBias) body.logit_bias = Object.entries(sampling.logitBias).map(([id, bias]) => [Number(id), bias]);
  if (sampling?.logprobs !== undefined) body.n_probs = Math.max(1, sampling.logprobs);
  // The token grammar as GBNF over token elements (grammar.ts); the server masks every target row with it.
  if (sampling?.grammar) body.grammar = gbnfOf(sampling.grammar);
  // Stop strings, matched on the detokenized text (the exported vocabulary's texts: src/export/gguf.ts).
  if (sampling?.stop !== undefined) body.stop = [...sampling.stop];
  return body;
}

/**
 * POST /completion on a connection of its own (agent: false; closed after the reply). Pooled keep-alive
 * connections do not survive here: after a streamed reply the server closes its side, and a later request
 * sent on that pooled connection failed with "other side closed" (undici's UND_ERR_SOCKET).
 */
function post(server: ServerProcess, body: Record<string, unknown>, signal: AbortSignal): Promise<IncomingMessage> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server.url}/completion`,
      {
        method: "POST",
        agent: false,
        signal,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (response) => {
        if (response.statusCode === 200) return resolve(response);
        readText(response).then(
          (text) => reject(new Error(`llama-server answered ${response.statusCode}: ${text.slice(0, 300)}`)),
          reject,
        );
      },
    );
    request.on("error", (error: Error & { code?: string }) =>
      reject(signal.aborted ? error : new Error(`slot ${body.id_slot}: ${error.code ?? ""} ${error.message}`)),
    );
    request.end(payload);
  });
}

async function readText(response: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of response) text += chunk;
  return text;
}

/** One request, answered in one reply. */
export async function complete(
  server: ServerProcess,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ServerReply> {
  return JSON.parse(await readText(await post(server, body, signal))) as ServerReply;
}

/**
 * One request streamed; `abort` closes the connection (the request is cancelled), `signal` is the case's
 * budget (an error). Tokens and probabilities are gathered event by event. `started` is called on the first
 * event: the server answers (headers included) only once the task runs on its slot, so a close before it
 * could cancel a task still queued, or one never sent.
 */
export async function completeStreamed(
  server: ServerProcess,
  body: Record<string, unknown>,
  signal: AbortSignal,
  abort: AbortSignal,
  started: () => void,
): Promise<ServerReply> {
  const reply: ServerReply = { tokens: [], stop_type: "none", aborted: true };
  let events = 0;
  const take = (event: Record<string, unknown>) => {
    if (event.error !== undefined) throw new Error(`llama-server streamed an error: ${JSON.stringify(event.error)}`);
    if (events++ === 0) started();
    const tokens = (event.tokens as number[] | undefined) ?? [];
    reply.tokens.push(...tokens);
    // The final event repeats nothing (content "", no tokens: send_final_response in stream mode).
    const text = (event.content as string | undefined) ?? "";
    if (tokens.length > 0 || text !== "") (reply.deltas ??= []).push({ text, tokens });
    const probabilities = event.completion_probabilities as ProbabilityEntry[] | undefined;
    if (probabilities) (reply.completion_probabilities ??= []).push(...probabilities);
    // A token of a speculative round carries prob 1 and no alternatives (server-context.cpp: "TODO: set
    // result.probs"); the stream leaves such an entry out where the one-reply JSON writes it as logprob 0
    // with no alternatives (docs/findings/llama-server-logprobs-of-accepted-drafts.md). Written here as the
    // one-reply JSON writes it, so both forms of a reply say the same.
    else if (body.n_probs !== undefined)
      (reply.completion_probabilities ??= []).push(...tokens.map((id) => ({ id, logprob: 0, top_logprobs: [] })));
    if (event.stop === true) {
      reply.aborted = false;
      reply.stop_type = String(event.stop_type);
      reply.tokens_cached = event.tokens_cached as number | undefined;
      reply.timings = event.timings as ServerReply["timings"];
      reply.stopping_word = event.stopping_word as string | undefined;
      reply.tokens_predicted = event.tokens_predicted as number | undefined;
      reply.tokens_evaluated = event.tokens_evaluated as number | undefined;
    }
  };
  try {
    const response = await post(server, { ...body, stream: true }, AbortSignal.any([signal, abort]));
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of response) {
      pending += decoder.decode(chunk as Buffer, { stream: true });
      const events = pending.split("\n\n");
      pending = events.pop() ?? "";
      for (const event of events) {
        const data = event.split("\n").find((line) => line.startsWith("data: "));
        if (data && data !== "data: [DONE]") take(JSON.parse(data.slice(6)) as Record<string, unknown>);
      }
      if (!reply.aborted) break;
    }
  } catch (error) {
    if (signal.aborted || !abort.aborted || events === 0) throw error; // the budget, or a real failure
  }
  return reply;
}
