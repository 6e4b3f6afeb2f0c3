// One case on llama-server: every request goes to POST /completion (completion.ts), pinned to its own slot
// (id_slot = its index). A request arriving at step 0 is sent when the case starts; one arriving at step k > 0
// once the server has run k steps of this case, a step being one pass of its update_slots loop (the `posting
// NEXT_RESPONSE` debug line it writes per pass while a slot is busy), or at once when every request sent
// before it is done (an idle server runs no steps). An abort at step k closes its request's connection once
// the server has run k steps (the server cancels the task: completion.ts): the tokens received by then are
// the output, finish reason abort, unless the request finished first. The steps are the server's, not the
// reference engine's (a server step decodes every busy slot once), so arrivals and aborts land at comparable
// points, never at exactly the reference engine's forwards; the laws that run such cases compare outputs,
// which must not depend on when a request arrives or is cut. The replies give the tokens, the stop type and
// the totals draft_n / draft_n_accepted; the log gives the rounds (log-rounds.ts), checked against the tokens
// and the totals before anything is reported.
import type { Case, CaseRequest } from "../../case/case.ts";
import type { ReportedOutput } from "../../trace/outputs-line.ts";
import { complete, completeStreamed, completionBody, type ServerReply } from "./completion.ts";
import { readSlotLogs, STOP_PROCESSING, type LoggedRound, type SlotLog } from "./log-rounds.ts";
import type { ServerProcess } from "./process.ts";
import { grammarFinish } from "./grammar.ts";
import { resolveModelSpec } from "../../case/models.ts";
import { hasText } from "../../sampling/params.ts";

export interface RequestRun {
  request: CaseRequest;
  output: ReportedOutput;
  rounds: LoggedRound[];
  /** The tokens the server returned (the output's, plus the EOS a finished grammar forced: grammar.ts). */
  serverTokens: number[];
  /** The server slot it ran on. */
  slot: number;
  /** Its place in the order the requests were sent (the case's arrival order; with request slots, admission). */
  rank: number;
}

/** The debug line update_slots() writes once per pass while any slot is busy: one server step. */
const SERVER_STEP = /posting NEXT_RESPONSE/;

/** Counts the server's steps in its log from line `from` on (incrementally). */
class StepCounter {
  private scanned: number;
  private count = 0;

  constructor(
    private readonly server: ServerProcess,
    from: number,
  ) {
    this.scanned = from;
  }

  get steps(): number {
    const lines = this.server.lines;
    for (; this.scanned < lines.length; this.scanned++) if (SERVER_STEP.test(lines[this.scanned])) this.count++;
    return this.count;
  }
}

function finishReason(reply: ServerReply): ReportedOutput["finishReason"] {
  if (reply.aborted) return "abort";
  if (reply.stop_type === "eos") return "eos";
  if (reply.stop_type === "limit") return "length";
  if (reply.stop_type === "word") return "stop";
  return "unfinished";
}

/**
 * The text layer's fields of a detokenized (streamed) request: its deltas are the server's events (one per token:
 * the text it released, held back while the text ends in a proper prefix of a stop string, and that token), its
 * text what they spell (the stream's last event repeats nothing: content "" and no tokens), the stop string the
 * server reports, and its counts: completion tokens n_decoded less a finished grammar's forced EOS (grammar.ts),
 * prompt tokens the prompt's length. An aborted request has no final event, hence no usage.
 */
function textFields(reply: ServerReply, forcedEos: boolean): Partial<ReportedOutput> {
  const deltas = (reply.deltas ?? []).map((delta) => ({ text: delta.text, tokens: [...delta.tokens] }));
  // The forced EOS is no output token: it leaves the last delta that carried it.
  if (forcedEos)
    [...deltas]
      .reverse()
      .find((delta) => delta.tokens.length > 0)
      ?.tokens.pop();
  const fields: Partial<ReportedOutput> = { text: deltas.map((delta) => delta.text).join(""), deltas };
  if (reply.stop_type === "word" && reply.stopping_word !== undefined) fields.stopString = reply.stopping_word;
  if (reply.tokens_predicted !== undefined && reply.tokens_evaluated !== undefined)
    fields.usage = {
      promptTokens: reply.tokens_evaluated,
      completionTokens: reply.tokens_predicted - (forcedEos ? 1 : 0),
    };
  return fields;
}

/**
 * The rounds checked against the reply: every root is the request's own token, and the totals agree with the
 * reply's. An aborted request has no totals (its final event never came) and the server may have run rounds
 * past the tokens received before the close: only the rounds whose tokens were all received are kept.
 */
function checkRounds(request: CaseRequest, reply: ServerReply, log: SlotLog): LoggedRound[] {
  const sequence = [...request.prompt, ...reply.tokens];
  const rounds = reply.aborted
    ? log.rounds.filter((round) => round.rootPosition + round.accepted + 1 <= sequence.length - 1)
    : log.rounds;
  for (const round of rounds) {
    const where = `request ${request.id}, round at position ${round.rootPosition}`;
    if (sequence[round.rootPosition] !== round.root)
      throw new Error(
        `${where}: the logged root ${round.root} is not the request's token ${sequence[round.rootPosition]}`,
      );
  }
  if (reply.aborted) return rounds;
  const drafted = rounds.reduce((sum, round) => sum + round.numDrafts, 0);
  const accepted = rounds.reduce((sum, round) => sum + round.accepted, 0);
  const timings = reply.timings ?? {};
  if ((timings.draft_n ?? 0) !== drafted || (timings.draft_n_accepted ?? 0) !== accepted)
    throw new Error(
      `request ${request.id}: the log's rounds hold ${drafted} drafts / ${accepted} accepted, the reply's timings ${timings.draft_n ?? 0} / ${timings.draft_n_accepted ?? 0}`,
    );
  return rounds;
}

/** The replies by request index, the slot each request ran on, and the order they were sent in. */
interface Sent {
  replies: ServerReply[];
  slots: number[];
  order: number[];
}

/** Sends one request on `slot` (streamed and cut at its abort step when the case aborts it). */
function sendOne(
  server: ServerProcess,
  testCase: Case,
  index: number,
  slot: number,
  context: { counter: StepCounter; done: ReadonlySet<number>; signal: AbortSignal },
): Promise<ServerReply> {
  const request = testCase.workload.requests[index];
  const body = completionBody(testCase, request, slot);
  const abortSteps = testCase.workload.aborts.filter((abort) => abort.request === request.id);
  // A detokenized request is streamed: its events are the deltas a client reads (textFields below).
  if (abortSteps.length === 0 && hasText(request.sampling))
    return completeStreamed(server, body, context.signal, new AbortController().signal, () => undefined);
  if (abortSteps.length === 0) return complete(server, body, context.signal);
  // The abort waits for the request's first event (its task is running on the slot), then for its step.
  const cut = new AbortController();
  const abortStep = Math.min(...abortSteps.map((abort) => abort.step));
  const started = () =>
    void server
      .waitFor(() => context.done.has(index) || context.counter.steps >= abortStep, context.signal)
      .then(
        () => cut.abort(),
        () => cut.abort(),
      );
  return completeStreamed(server, body, context.signal, cut.signal, started);
}

/**
 * Sends every request at its arrival, aborts the aborted ones at their step. Without request slots each request
 * has a slot of its own (its index). With engine.requestSlots R the case's admission rule is followed on slots
 * 0..R-1: requests wait in the case's order, and one that has arrived takes the lowest slot no running request
 * holds once its holder's reply has come (the first waiting request that cannot get one holds back the rest),
 * as src/engine/step-loop.ts admits them.
 */
async function sendAll(server: ServerProcess, testCase: Case, mark: number, signal: AbortSignal): Promise<Sent> {
  const requests = testCase.workload.requests;
  const counter = new StepCounter(server, mark);
  const done = new Set<number>();
  const replies: Promise<ServerReply>[] = [];
  const slots: number[] = [];
  const sentOrder: number[] = [];
  const context = { counter, done, signal };
  const send = (index: number, slot: number) => {
    slots[index] = slot;
    sentOrder.push(index);
    replies[index] = sendOne(server, testCase, index, slot, context).finally(() => done.add(index));
    replies[index].catch(() => undefined); // awaited below, all together
  };
  const requestSlots = testCase.engine.requestSlots;
  if (requestSlots === undefined) {
    const order = requests.map((_, index) => index).sort((a, b) => requests[a].arrivalStep - requests[b].arrivalStep);
    for (const [rank, index] of order.entries()) {
      const before = order.slice(0, rank);
      if (requests[index].arrivalStep > 0)
        await server.waitFor(
          () => counter.steps >= requests[index].arrivalStep || before.every((earlier) => done.has(earlier)),
          signal,
        );
      send(index, index);
    }
  } else {
    const waiting = requests.map((_, index) => index);
    const holder = new Map<number, number>(); // slot -> the request index holding it
    while (waiting.length > 0) {
      // An idle server runs no steps: once every request sent is done, the next one arrives at once.
      const idle = () => replies.every((_, index) => done.has(index));
      for (const index of [...waiting]) {
        if (counter.steps < requests[index].arrivalStep && !idle()) continue;
        for (const [slot, held] of holder) if (done.has(held)) holder.delete(slot);
        const slot = Array.from({ length: requestSlots }, (_, slot) => slot).find((slot) => !holder.has(slot));
        if (slot === undefined) break;
        waiting.splice(waiting.indexOf(index), 1);
        holder.set(slot, index);
        send(index, slot);
      }
      if (waiting.length === 0) break;
      const [steps, finished] = [counter.steps, done.size];
      await server.waitFor(() => counter.steps !== steps || done.size !== finished, signal);
    }
  }
  return { replies: await Promise.all(replies), slots, order: sentOrder };
}

export async function runOnServer(server: ServerProcess, testCase: Case, timeoutMs: number): Promise<RequestRun[]> {
  const requests = testCase.workload.requests;
  const mark = server.lines.length;
  const sent = await sendAll(server, testCase, mark, AbortSignal.timeout(timeoutMs));
  // Every request's release line closes its log (the n-th on a slot for its n-th request); the log thread writes
  // it around the reply (a cancelled request's when the cancel task lands: the server polls a closed connection
  // once a second).
  const usedSlots = [...new Set(sent.slots)];
  let end = mark;
  for (const slot of usedSlots) {
    const pattern = (line: string) => STOP_PROCESSING.exec(line)?.[1] === String(slot);
    let from = mark;
    for (let served = sent.slots.filter((used) => used === slot).length; served > 0; served--)
      from = (await server.waitForLine(from, pattern, 5000)) + 1;
    end = Math.max(end, from);
  }
  const logs = readSlotLogs(server.lines, mark, end, usedSlots);
  const eosId = resolveModelSpec(testCase.model).eosId;
  server.lines.length = 0; // every line of this case is read: the next case starts a fresh log
  return requests.map((request, index) => {
    const reply = sent.replies[index];
    const slot = sent.slots[index];
    const log = logs.get(slot)!;
    // The n-th request sent to the slot ran as the n-th task it served (each is sent once its holder is done).
    const nth = sent.order.slice(0, sent.order.indexOf(index)).filter((other) => sent.slots[other] === slot).length;
    const task = log.tasks[nth];
    const rounds = checkRounds(request, reply, { ...log, rounds: log.rounds.filter((round) => round.task === task) });
    const output: ReportedOutput = {
      id: request.id,
      tokens: reply.tokens,
      finishReason: finishReason(reply),
    };
    // A cut stream whose request the server had finished (its last token's event came, its final event did not:
    // the two are written back to back) ended there, not by the abort: its log lines say how (TaskEnd: no
    // "stopped by" line means a stop string, the one other way a request ends here).
    const end = log.ends.get(task);
    if (reply.aborted && end?.timed && end.generated === reply.tokens.length)
      output.finishReason = end.stoppedBy === "eos" ? "eos" : end.stoppedBy === "limit" ? "length" : "stop";
    const grammar = request.sampling?.grammar;
    const finish = grammar && !reply.aborted ? grammarFinish(grammar, reply.tokens, eosId) : undefined;
    if (finish?.finished) Object.assign(output, { tokens: finish.tokens, finishReason: "stop" });
    if (hasText(request.sampling))
      Object.assign(output, textFields(reply, finish !== undefined && finish.tokens.length < reply.tokens.length));
    if (testCase.engine.mode === "speculative") {
      output.acceptLens = rounds.map((round) => round.accepted + 1);
      const first = rounds[0]?.drafts;
      if (first) output.firstRoundDrafts = first;
    }
    if (request.sampling?.logprobs !== undefined && reply.completion_probabilities) {
      const alternatives = request.sampling.logprobs;
      // One per output token (a finished grammar's forced EOS is none).
      output.logprobs = reply.completion_probabilities.slice(0, output.tokens.length).map((entry) => ({
        token: entry.id,
        logprob: entry.logprob,
        top: entry.top_logprobs.slice(0, alternatives).map((top) => ({ token: top.id, logprob: top.logprob })),
      }));
    }
    return { request, output, rounds, serverTokens: reply.tokens, slot, rank: sent.order.indexOf(index) };
  });
}
