// The trace an external chain-drafting engine returns when all it observes is its speculative rounds (the two
// llama.cpp engines): the case's requests with their outputs, and one verify event per round, the round's root
// and drafts as rows at positions root + depth, the accept length, the tokens the round produced and which of
// them were emitted. acceptIndex is the chain path 0..acceptLen-1 padded to numSteps + 1. Events are per
// request and round: which requests shared a forward is not observed (trace.engine.batchGrouping
// "unobserved", an engine field beyond the schema's named ones, which it allows), and nothing else (prefill,
// plain decode, draft forwards, KV, hidden states, per-row predictions) is invented, so the laws needing it
// say "not checkable".
import type { Case } from "../case/case.ts";
import type { Trace, TraceEvent } from "../trace/schema.ts";
import type { ReportedOutput } from "../trace/outputs-line.ts";

export interface ChainRoundEvent {
  request: number;
  root: number;
  rootPosition: number;
  /** The drafts the target verified (as far as observed). */
  drafts: readonly number[];
  acceptLen: number;
  /** The accepted drafts and the target's token after them. */
  produced: number[];
  bonus: number;
  emitted: number[];
  /** The request finished inside this round. */
  finished: boolean;
}

export function chainVerifyEvent(index: number, numSteps: number, round: ChainRoundEvent): TraceEvent {
  const acceptIndex = Array.from({ length: numSteps + 1 }, (_, node) => (node < round.acceptLen ? node : -1));
  return {
    index,
    phase: "verify",
    model: "target",
    rows: [round.root, ...round.drafts].map((token, depth) => ({
      request: round.request,
      token,
      position: round.rootPosition + depth,
    })),
    verify: [
      {
        request: round.request,
        acceptIndex,
        acceptLen: round.acceptLen,
        acceptTokens: round.produced,
        bonus: round.bonus,
        emitted: round.emitted,
        finished: round.finished,
      },
    ],
  };
}

export interface ChainTraceIdentity {
  engineName: string;
  engineVersion: string;
  threads: number;
  targetDigest: string;
  draftDigest: string | null;
}

/** The trace around `events`: engine, models, the case's config and each request's output. */
export function chainTrace(
  testCase: Case,
  runs: readonly { request: Case["workload"]["requests"][number]; output: ReportedOutput }[],
  events: TraceEvent[],
  identity: ChainTraceIdentity,
): Trace {
  return {
    formatVersion: 1,
    engine: {
      name: identity.engineName,
      version: identity.engineVersion,
      dtype: "float32",
      threads: identity.threads,
      batchGrouping: "unobserved",
    },
    models: {
      target: identity.targetDigest,
      ...(identity.draftDigest && testCase.engine.mode === "speculative" ? { draft: [identity.draftDigest] } : {}),
    },
    config: { ...testCase.engine, draft: testCase.draft },
    requests: runs.map((run) => ({
      id: run.request.id,
      prompt: [...run.request.prompt],
      output: run.output.tokens,
      finishReason: run.output.finishReason ?? "unfinished",
    })),
    events,
  };
}
