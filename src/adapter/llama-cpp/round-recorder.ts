// Speculative rounds as node-llama-cpp runs them, observed from outside the library. A sequence with a token
// predictor (LlamaContextSequence._speculativeEvaluate) asks the predictor for drafts right before each target
// decode, puts [root, ...drafts] in one batch, and then compares the drafts with the sampled tokens; the
// validated ones are emitted later without another decode. The library exposes only cumulative counters
// (sequence.tokenPredictions: validated, refuted, used). RecordingPredictor wraps the real predictor, so each
// predictTokens() call marks the start of one decode with exactly the drafts it returned, and the counters read
// at the next yielded token say how many of them were validated. A round is accepted only when the counters
// account for every draft it proposed (validated + refuted = drafts); otherwise the run fails with
// RoundAttributionError rather than report numbers that were not observed.
import { DraftSequenceTokenPredictor, TokenPredictor, type LlamaContextSequence, type Token } from "node-llama-cpp";

export interface Round {
  /** Global order of rounds within a case (the trace's event index). */
  index: number;
  /** The position of the root (the last token before the drafts): prompt + emitted so far - 1. */
  rootPosition: number;
  root: number;
  drafts: number[];
  /** Drafts the library validated (the counters' delta over this decode). */
  validated: number;
  /** Tokens the round produced: the decode's sampled token, then one per validated draft. */
  produced: number[];
  /**
   * The draft model's context (its sequence's tokens, public API) when it handed the drafts over: what the
   * drafts were computed from. Draft-model predictors only; for --log-rounds and findings, not the trace.
   */
  draftContext?: number[];
}

export class RoundAttributionError extends Error {
  constructor(message: string) {
    super(`cannot attribute a speculative round: ${message}`);
    this.name = "RoundAttributionError";
  }
}

/** The sequence's prediction counters and KV length when drafts were handed over. */
interface SequenceState {
  used: number;
  validated: number;
  refuted: number;
  nextTokenIndex: number;
}

/** Delegates to `inner` and records what each predictTokens() call handed to the target. */
export class RecordingPredictor extends TokenPredictor {
  private pendingDrafts: number[] | undefined;
  private pendingDraftContext: number[] | undefined;
  private stateAtPredict: SequenceState | undefined;

  constructor(readonly inner: TokenPredictor) {
    super();
  }

  override reset(params: Parameters<TokenPredictor["reset"]>[0]): Promise<void> | void {
    return this.inner.reset(params);
  }

  override pushTokens(tokens: Token[]): void {
    this.inner.pushTokens(tokens);
  }

  override async predictTokens(): Promise<Token[]> {
    const drafts = [...(await this.inner.predictTokens())];
    if (this.pendingDrafts)
      throw new RoundAttributionError("two draft requests without a token in between (a decode emitted nothing)");
    this.pendingDrafts = drafts.map(Number);
    if (this.inner instanceof DraftSequenceTokenPredictor)
      this.pendingDraftContext = this.inner.draftSequence.contextTokens.map(Number);
    this.stateAtPredict = this.readState?.();
    return drafts;
  }

  override stop(untilPredictionsExhausted?: boolean): Promise<void> | void {
    return this.inner.stop(untilPredictionsExhausted);
  }

  override updateInputTokens(tokens: Token[]): void {
    this.inner.updateInputTokens(tokens);
  }

  override dispose(): Promise<void> | void {
    return this.inner.dispose();
  }

  /** Set by RoundTracker: reads the sequence's state at the moment drafts are handed over. */
  readState?: () => SequenceState;

  /** The drafts of the decode that just ran (undefined: no decode since the last call) and the state then. */
  takePending(): { drafts: number[]; state: SequenceState; draftContext?: number[] } | undefined {
    const drafts = this.pendingDrafts;
    if (!drafts) return undefined;
    this.pendingDrafts = undefined;
    if (!this.stateAtPredict) throw new RoundAttributionError("the predictor is not attached to a sequence");
    return { drafts, state: this.stateAtPredict, draftContext: this.pendingDraftContext };
  }
}

/** Turns the tokens one sequence yields into rounds, with the predictor's record and the counters. */
export class RoundTracker {
  readonly rounds: Round[] = [];
  private lastUsed = 0;

  constructor(
    private readonly sequence: LlamaContextSequence,
    private readonly predictor: RecordingPredictor,
    private readonly promptLength: number,
    private readonly nextRoundIndex: () => number,
  ) {
    predictor.readState = () => ({ ...sequence.tokenPredictions, nextTokenIndex: sequence.nextTokenIndex });
  }

  /** Called with each yielded token in order; `before` is the sequence (prompt + earlier tokens). */
  onToken(token: number, before: readonly number[]): void {
    const now = this.sequence.tokenPredictions;
    const pending = this.predictor.takePending();
    if (pending) {
      const validated = now.validated - pending.state.validated;
      const refuted = now.refuted - pending.state.refuted;
      if (validated + refuted !== pending.drafts.length)
        throw new RoundAttributionError(
          `${pending.drafts.length} drafts proposed, the counters moved by ${validated} validated + ${refuted} refuted`,
        );
      const rootPosition = before.length - 1;
      // The decode's batch starts at the KV length: the whole prompt first, then the root alone.
      const batchStart = before.length > this.promptLength ? rootPosition : 0;
      if (pending.state.nextTokenIndex !== batchStart)
        throw new RoundAttributionError(
          `the root is at position ${rootPosition}, the decode started at ${pending.state.nextTokenIndex}`,
        );
      this.rounds.push({
        index: this.nextRoundIndex(),
        rootPosition,
        root: before[rootPosition],
        drafts: pending.drafts,
        validated,
        produced: [token],
        ...(pending.draftContext ? { draftContext: pending.draftContext } : {}),
      });
    } else {
      const round = this.rounds.at(-1);
      // A token without a decode must come from a validated draft (the library's "used" counter).
      if (!round || now.used !== this.lastUsed + 1 || round.produced.length > round.validated)
        throw new RoundAttributionError(`token ${token} came neither from a decode nor from a validated draft`);
      round.produced.push(token);
    }
    this.lastUsed = now.used;
  }

  /** Tokens of the current round still held as validated drafts (yielded without a decode). */
  owedTokens(): number {
    const round = this.rounds.at(-1);
    return round ? round.validated + 1 - round.produced.length : 0;
  }
}
