// One case on llama-server: every request of the workload is sent at once to POST /completion, pinned to its
// own slot (id_slot = its index), as token ids (BOS included by the case), greedy through the one-sampler chain
// ["top_k"] with top_k 1 (the argmax; ties to the lower id), or the temperature chain for a stochastic request;
// n_predict is maxNewTokens, cache_prompt the case's prefixCache (S is the server's flag: launch.ts). The server's replies
// give the tokens, the stop type and the totals draft_n / draft_n_accepted; its log gives the rounds
// (log-rounds.ts), which are checked against the tokens and the totals before anything is reported.
import type { Case, CaseRequest } from "../../case/case.ts";
import type { ReportedOutput } from "../../trace/outputs-line.ts";
import { isStochastic } from "../../sampling/params.ts";
import { readSlotLogs, STOP_PROCESSING, type LoggedRound, type SlotLog } from "./log-rounds.ts";
import type { ServerProcess } from "./process.ts";

export interface ServerReply {
  tokens: number[];
  stop_type: string;
  tokens_cached?: number;
  timings?: { draft_n?: number; draft_n_accepted?: number };
  completion_probabilities?: { id: number; logprob: number; top_logprobs: { id: number; logprob: number }[] }[];
}

export interface RequestRun {
  request: CaseRequest;
  output: ReportedOutput;
  rounds: LoggedRound[];
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
  if (isStochastic(sampling)) {
    Object.assign(body, {
      samplers: ["temperature"],
      temperature: sampling!.temperature,
      seed: sampling!.seed ?? request.id,
    });
  } else Object.assign(body, { samplers: ["top_k"], top_k: 1 });
  if (sampling?.logitBias) body.logit_bias = Object.entries(sampling.logitBias).map(([id, bias]) => [Number(id), bias]);
  if (sampling?.logprobs !== undefined) body.n_probs = Math.max(1, sampling.logprobs);
  return body;
}

async function complete(
  server: ServerProcess,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ServerReply> {
  const response = await fetch(`${server.url}/completion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`llama-server answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as ServerReply;
}

function finishReason(reply: ServerReply): ReportedOutput["finishReason"] {
  if (reply.stop_type === "eos") return "eos";
  if (reply.stop_type === "limit") return "length";
  return "unfinished";
}

/** Rounds checked against the reply: root and accepted drafts are the request's own tokens, totals agree. */
function checkRounds(request: CaseRequest, reply: ServerReply, log: SlotLog): void {
  const sequence = [...request.prompt, ...reply.tokens];
  for (const round of log.rounds) {
    const where = `request ${request.id}, round at position ${round.rootPosition}`;
    if (sequence[round.rootPosition] !== round.root)
      throw new Error(
        `${where}: the logged root ${round.root} is not the request's token ${sequence[round.rootPosition]}`,
      );
  }
  const drafted = log.rounds.reduce((sum, round) => sum + round.numDrafts, 0);
  const accepted = log.rounds.reduce((sum, round) => sum + round.accepted, 0);
  const timings = reply.timings ?? {};
  if ((timings.draft_n ?? 0) !== drafted || (timings.draft_n_accepted ?? 0) !== accepted)
    throw new Error(
      `request ${request.id}: the log's rounds hold ${drafted} drafts / ${accepted} accepted, the reply's timings ${timings.draft_n ?? 0} / ${timings.draft_n_accepted ?? 0}`,
    );
}

export async function runOnServer(server: ServerProcess, testCase: Case, timeoutMs: number): Promise<RequestRun[]> {
  const requests = testCase.workload.requests;
  const mark = server.lines.length;
  const signal = AbortSignal.timeout(timeoutMs);
  const replies = await Promise.all(
    requests.map((request, slot) => complete(server, completionBody(testCase, request, slot), signal)),
  );
  // Every slot's release line closes its log; the log thread writes it around the reply.
  const slots = requests.map((_, slot) => slot);
  let end = mark;
  for (const slot of slots) {
    const pattern = (line: string) => STOP_PROCESSING.exec(line)?.[1] === String(slot);
    end = Math.max(end, (await server.waitForLine(mark, pattern, 5000)) + 1);
  }
  const logs = readSlotLogs(server.lines, mark, end, slots);
  server.lines.length = 0; // every line of this case is read: the next case starts a fresh log
  return requests.map((request, slot) => {
    const reply = replies[slot];
    const log = logs.get(slot)!;
    checkRounds(request, reply, log);
    const output: ReportedOutput = {
      id: request.id,
      tokens: reply.tokens,
      finishReason: finishReason(reply),
    };
    if (testCase.engine.mode === "speculative") {
      output.acceptLens = log.rounds.map((round) => round.accepted + 1);
      const first = log.rounds[0]?.drafts;
      if (first) output.firstRoundDrafts = first;
    }
    if (request.sampling?.logprobs !== undefined && reply.completion_probabilities) {
      const alternatives = request.sampling.logprobs;
      output.logprobs = reply.completion_probabilities.map((entry) => ({
        token: entry.id,
        logprob: entry.logprob,
        top: entry.top_logprobs.slice(0, alternatives).map((top) => ({ token: top.id, logprob: top.logprob })),
      }));
    }
    return { request, output, rounds: log.rounds };
  });
}
