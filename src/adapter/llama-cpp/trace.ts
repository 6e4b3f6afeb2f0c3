// The trace the llama.cpp engine returns: its requests with outputs, and one verify event per speculative
// round (see round-recorder.ts for how rounds are observed). A round's rows are the decode's root and the
// drafts the predictor handed to the target, at positions root + depth; its verify result carries the accept
// length the library's counters show, the tokens the round produced (the accepted path's predictions, read
// as the library yielded them) and which of them made it into the output. What the library does not expose
// is left out, so laws needing it say "not checkable": no prefill or decode events, no draft-model forwards,
// no slots, attention, hidden states, per-row predictions or margins. acceptIndex is the chain path 0..acceptLen-1
// (one request per event: node-llama-cpp's batch grouping is not observable), padded to numSteps + 1.
import type { Case } from "../../case/case.ts";
import type { Trace } from "../../trace/schema.ts";
import { chainTrace, chainVerifyEvent } from "../chain-trace.ts";
import type { RequestRun } from "./run-on-llama.ts";

export interface TraceIdentity {
  engineVersion: string;
  threads: number;
  targetDigest: string;
  draftDigest: string | null;
}

export function llamaTrace(testCase: Case, runs: readonly RequestRun[], identity: TraceIdentity): Trace {
  const numSteps = testCase.engine.numSteps;
  const rounds = runs
    .flatMap((run) => run.rounds.map((round, i) => ({ run, round, last: i === run.rounds.length - 1 })))
    .sort((a, b) => a.round.index - b.round.index);
  const events = rounds.map(({ run, round, last }, index) => {
    const id = run.request.id;
    const acceptLen = round.validated + 1;
    if (round.produced.length !== acceptLen)
      throw new Error(`request ${id}: a round produced ${round.produced.length} tokens for accept_len ${acceptLen}`);
    const outputStart = round.rootPosition + 1 - run.request.prompt.length;
    return chainVerifyEvent(index, numSteps, {
      request: id,
      root: round.root,
      rootPosition: round.rootPosition,
      drafts: round.drafts,
      acceptLen,
      produced: [...round.produced],
      bonus: round.produced[acceptLen - 1],
      emitted: run.output.tokens.slice(outputStart, outputStart + acceptLen),
      finished: last,
    });
  });
  return chainTrace(testCase, runs, events, { engineName: "llama.cpp", ...identity });
}
