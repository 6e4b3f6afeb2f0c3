// The trace the llama-server engine returns: requests with outputs, and one verify event per logged round
// (log-rounds.ts). A round's rows are its root and drafts at positions root + depth; its verify result the
// accept length the server logged, the tokens the round produced (read from the output: the accepted drafts
// and the target's token after them) and which of them were emitted. When the drafter logs no tokens (n-gram)
// the rows hold the root and the accepted drafts only (the rejected draft is not observable). A round the
// request finished inside (EOS) is marked finished; tokens past the end were never returned, so its bonus is
// the last token that was. Not observable, and left out: prefill and plain decode forwards, the drafter's
// forwards, KV cells, attention, hidden states, per-row predictions and margins, which slots shared a batch
// (events are per request and round, requests in the order they were sent: trace.engine.batchGrouping says
// "unobserved"). With request slots the trace's requests carry the slot each ran on.
import type { Case } from "../../case/case.ts";
import type { Trace } from "../../trace/schema.ts";
import { chainTrace, chainVerifyEvent } from "../chain-trace.ts";
import type { RequestRun } from "./run-case.ts";

export interface TraceIdentity {
  engineVersion: string;
  targetDigest: string;
  draftDigest: string | null;
}

export function serverTrace(testCase: Case, runs: readonly RequestRun[], identity: TraceIdentity): Trace {
  const numSteps = testCase.engine.numSteps;
  // Requests in the order they were sent, each with its rounds: deterministic (the log interleaves concurrent
  // slots by timing), and a request that took a slot after another held it comes after it (law "slot history").
  const sentOrder = [...runs].sort((a, b) => a.rank - b.rank);
  const events = sentOrder.flatMap((run) => {
    // The server's tokens: a finished grammar's forced EOS (grammar.ts) is produced by its last round but is
    // no output token, so it is not emitted; that round is the one that finished the request.
    const sequence = [...run.request.prompt, ...run.serverTokens];
    const outputEnd = run.request.prompt.length + run.output.tokens.length;
    return run.rounds.map((round) => {
      const acceptLen = round.accepted + 1;
      const start = round.rootPosition + 1;
      const produced = sequence.slice(start, start + acceptLen);
      return {
        request: run.request.id,
        root: round.root,
        rootPosition: round.rootPosition,
        drafts: round.drafts ?? produced.slice(0, round.accepted),
        acceptLen,
        produced,
        bonus: produced[produced.length - 1] ?? round.root,
        emitted: produced.slice(0, Math.max(0, outputEnd - start)),
        // An aborted request was cut between rounds (its rounds are those whose tokens all arrived).
        finished: run.output.finishReason !== "abort" && round.rootPosition + acceptLen >= sequence.length - 1,
      };
    });
  });
  const trace = chainTrace(
    testCase,
    runs,
    events.map((round, index) => chainVerifyEvent(index, numSteps, round)),
    { engineName: "llama-server", threads: 1, ...identity },
  );
  // With request slots, the slot each request ran on (law "slot history" reads which requests reused one).
  if (testCase.engine.requestSlots !== undefined)
    trace.requests = trace.requests?.map((request, index) => ({ ...request, slot: runs[index].slot }));
  return trace;
}
