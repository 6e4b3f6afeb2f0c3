// One request's state, with explicit counters (no derived guesses): how much of the prompt has target
// KV, how long the verified sequence is, and the pending draft token with its hidden state.
import {
  hasText,
  isStochastic,
  needsLogits,
  stopTokenIdsOf,
  type LogprobEntry,
  type SamplingParams,
} from "../sampling/params.ts";
import { streamSeed, UniformStream } from "../sampling/uniform-stream.ts";
import type { FinishReason } from "../trace/outputs-line.ts";
import { Faults } from "../case/faults.ts";
import { GrammarMatcher } from "./grammar-matcher.ts";
import { draftStepsOf } from "../case/draft-schedule.ts";
import type { PendingExtend } from "./draft-schedule.ts";
import type { HiddenRows } from "./hidden-rows.ts";
import { Penalizer } from "./penalizer.ts";
import { SlotDrafter } from "./slot-drafter.ts";
import { TextStream } from "./text-stream.ts";
import type { Vocabulary } from "../model/vocabulary.ts";
import { textOptionsOf } from "../sampling/stop-strings.ts";
import type { RowSampler } from "./row-sampler.ts";
import type { TopK } from "./topk.ts";

export type RequestStatus = "waiting" | "prefilling" | "decoding" | "finished";
/** A request that ended (trace/outputs-line.ts): any finish reason but "unfinished". */
type EndReason = Exclude<FinishReason, "unfinished">;

/** A round's inputs resolved at launch from the future ring, with the placeholders they replaced. */
export interface LaunchInputs {
  token?: number;
  tokenPlaceholder?: number;
  draftRoot?: TopK;
  draftHidden?: HiddenRows;
  draftPlaceholder?: number;
}

export interface RequestInit {
  id: number;
  prompt: readonly number[];
  maxNewTokens: number;
  arrivalStep: number;
  sampling?: SamplingParams;
  draftSchedule?: readonly number[];
}

export class Request {
  readonly id: number;
  readonly prompt: readonly number[];
  readonly maxNewTokens: number;
  readonly arrivalStep: number;
  readonly sampling: SamplingParams;
  /** Draft steps per round (draft-schedule.ts); absent: numSteps every round. */
  readonly draftSchedule: readonly number[] | undefined;
  /** Verified positions whose draft extend waits while speculation is off (draft-schedule.ts). */
  readonly pendingExtends: PendingExtend[] = [];
  status: RequestStatus = "waiting";
  finishReason: EndReason | undefined;
  /** The stop id that ended the request (finish reason "stop"). */
  stopTokenId: number | undefined;
  /** One entry per output token when the request asks for logprobs. */
  readonly logprobs: LogprobEntry[] = [];
  readonly penalizer: Penalizer;
  /** Detokenized requests (sampling.stop present): the output text, its stop string and streamed deltas. */
  readonly text: TextStream | undefined;
  /** Requests with a grammar: the matcher over the emitted output (grammar-matcher.ts). */
  readonly grammar: GrammarMatcher | undefined;
  /** Overlap: uniforms the stream had given when the latest processed result was produced (a discard rewinds to it). */
  processedDraws = 0;
  /** Stochastic requests: the request's own stream of uniforms (kept across retracts: resume does not resample). */
  readonly stream: UniformStream | undefined;
  private readonly stopTokenIds: ReadonlySet<number>;
  /** Some option reads the target's logits (processing, logprobs, sampling): its rows get a sampler. */
  readonly samplesProcessed: boolean;
  /** Verified tokens x_0..x_L: the prompt, then every emitted token; x_L (the bonus) has no target KV yet. */
  readonly tokens: number[];
  readonly output: number[] = [];
  /** Prompt tokens whose target KV is computed (prefill progress). */
  prefilledLength = 0;
  /** L: verified tokens with target KV (positions 0..L-1). */
  targetKvLength = 0;
  /**
   * Sliding-window targets: the first position the windowed layers of the row at L attend, L - window + 1
   * (below 0 while the sequence is shorter than the window), kept as SWA engines keep their window bookkeeping:
   * set by prefill, moved by each decode step and verify round (verify.ts commitWindow).
   */
  targetWindowStart = 0;
  /** Persisted draft KV rows (anchors 0..draftKvLength-1). */
  draftKvLength = 0;
  /** The draft's top-K after x_L (d_1 is tokens[0]) for the next round, and the draft hidden state produced with it. */
  draftRoot: TopK | undefined;
  draftHidden: HiddenRows | undefined;
  /** Multi-layer: persisted rows of module k's KV (anchors 0..moduleKvLength[k]-1). */
  readonly moduleKvLength: number[] = [];
  /** Multi-layer: target hidden h_i kept until every module has persisted anchor i. */
  readonly targetHidden = new Map<number, HiddenRows>();
  /** accept_len of every verify round (including the root). */
  readonly acceptLens: number[] = [];
  /** Rounds cut short by EOS, a stop id or max new tokens (they cannot accept everything). */
  cutRounds = 0;
  retracts = 0;
  /** The request slot it was admitted into (engine.requestSlots), and that slot's drafter state. */
  slot: number | undefined;
  slotDrafter = new SlotDrafter();
  /** The stale-draft-KV fault: resume skipped the draft pools, so the next prefill must not extend them. */
  skipDraftOnResume = false;
  /**
   * Resumed while its next round has speculation off (draft-schedule.ts): where its draft KV ended at the retract.
   * The re-prefill rewrites the draft KV up to there; the positions after it wait for the catch-up again, as
   * they did before the retract.
   */
  draftWaitsFrom: number | undefined;
  /**
   * Overlap: finished while its next step was already planned. It still runs that step on the device (one
   * extra delayed round, as SGLang, vLLM and TensorRT-LLM do), whose results are discarded; then it is freed.
   */
  zombie = false;
  /** Overlap: the future-ring entry this step's outputs (bonus, draft root) are written to. */
  futureEntry: number | undefined;
  /** Overlap: the ring entry the next launch resolves its inputs from (what the plan holds as placeholders). */
  plannedFrom: number | undefined;
  plannedExpects: { token: boolean; draft: boolean } | undefined;
  /** Overlap: this round's inputs as launch resolved them (undefined: the request's own state). */
  launch: LaunchInputs | undefined;
  /** The first event of the work in flight (its results not processed yet): discarded if a retract or abort lands. */
  inFlightSince = 0;

  /** Draft tokens a round whose bonus sits at a position may verify within the context limits (context-limit.ts). */
  private readonly lookahead: (bonusPosition: number) => number;

  constructor(
    init: RequestInit,
    lookahead: (bonusPosition: number) => number = () => Infinity,
    /** The model's vocabulary (model/vocabulary.ts), read by detokenized requests only. */
    vocabulary?: () => Vocabulary,
    faults?: Faults,
  ) {
    this.lookahead = lookahead;
    this.id = init.id;
    this.prompt = [...init.prompt];
    this.maxNewTokens = init.maxNewTokens;
    this.arrivalStep = init.arrivalStep;
    this.tokens = [...init.prompt];
    this.sampling = init.sampling ?? {};
    this.draftSchedule = init.draftSchedule ? [...init.draftSchedule] : undefined;
    this.stopTokenIds = stopTokenIdsOf(this.sampling);
    this.samplesProcessed = needsLogits(this.sampling);
    this.penalizer = new Penalizer(init.prompt);
    this.grammar = this.sampling.grammar ? new GrammarMatcher(this.sampling.grammar) : undefined;
    if (hasText(this.sampling) && !vocabulary) throw new Error(`request ${init.id}: stop strings need the vocabulary`);
    this.text =
      hasText(this.sampling) && vocabulary
        ? new TextStream(vocabulary(), textOptionsOf(this.sampling), faults ?? new Faults([]))
        : undefined;
    this.stream = isStochastic(this.sampling) ? new UniformStream(streamSeed(this.sampling.seed, this.id)) : undefined;
  }

  /** The request draws its tokens (temperature > 0). */
  get stochastic(): boolean {
    return this.stream !== undefined;
  }

  /**
   * How a target row that samples this request's next token is processed: its committed output is the
   * emitted tokens plus `pathTokens` (a verify node's drafts). Undefined when no option needs the logits.
   */
  rowSampler(pathTokens: readonly number[], eosId: number, process = true): RowSampler | undefined {
    if (!this.samplesProcessed) return undefined;
    // Under overlap the device is ahead of the processed output: its tokens in flight count as committed.
    const inFlight = this.tokens.slice(this.prompt.length + this.output.length);
    const committed = inFlight.length > 0 ? [...inFlight, ...pathTokens] : pathTokens;
    const context = this.penalizer.contextWith(committed);
    if (this.grammar)
      return {
        params: this.sampling,
        context: { ...context, grammarState: this.grammar.stateWith(committed) },
        eosId,
        process,
      };
    return { params: this.sampling, context, eosId, process };
  }

  /**
   * Requests with a grammar: the mask state of a draft row whose context holds the verified tokens (those in
   * flight included) plus `pathTokens`, the drafts on its path. Undefined without a grammar.
   */
  draftMaskState(pathTokens: readonly number[]): number | undefined {
    if (!this.grammar) return undefined;
    const inFlight = this.tokens.slice(this.prompt.length + this.output.length);
    return this.grammar.stateWith(inFlight.length > 0 ? [...inFlight, ...pathTokens] : pathTokens);
  }

  /** Draft steps its schedule gives the request's next round (its rounds so far: the accept lengths recorded). */
  scheduledSteps(numSteps: number): number {
    return draftStepsOf(this.draftSchedule, this.acceptLens.length, numSteps);
  }

  /**
   * Draft steps of the request's next round (its rounds so far: the accept lengths recorded), cut to what fits
   * before the context limits with the bonus at position L (a request past its draft's context: 0).
   */
  draftSteps(numSteps: number): number {
    return Math.min(this.scheduledSteps(numSteps), this.lookahead(this.targetKvLength));
  }

  /**
   * Tokens to prefill: the prompt, or after a retract every verified token but the pending bonus
   * (resume keeps x_L and does not resample it).
   */
  get prefillLength(): number {
    return this.hasPendingBonus ? this.tokens.length - 1 : this.prompt.length;
  }

  /** A generated token is waiting as x_L (its KV not computed): true once the first token was sampled. */
  get hasPendingBonus(): boolean {
    return this.output.length > 0;
  }

  /** Retracts: frees nothing itself (the engine frees the pools); resets the KV counters for resume. Mutates. */
  resetForResume(keepDraftState: boolean): void {
    this.status = "prefilling";
    this.prefilledLength = 0;
    this.targetKvLength = 0;
    this.retracts += 1;
    this.slotDrafter.rollBack();
    if (keepDraftState) return;
    // A retract during a resume's re-prefill keeps the first retract's mark (the re-prefill had not reached it).
    this.draftWaitsFrom = this.output.length > 0 ? (this.draftWaitsFrom ?? this.draftKvLength) : undefined;
    this.pendingExtends.length = 0;
    this.draftKvLength = 0;
    this.draftRoot = undefined;
    this.draftHidden = undefined;
    this.moduleKvLength.fill(0);
    this.targetHidden.clear();
  }

  get active(): boolean {
    return this.status === "prefilling" || this.status === "decoding";
  }

  /** Takes part in forwards: active, or a zombie running its last planned step. */
  get running(): boolean {
    return this.active || this.zombie;
  }

  /**
   * Overlap: a retract or abort discards the results in flight: the verified tokens go back to the
   * processed ones (prompt + output). The stale-placeholder fault keeps `placeholder` as the pending token.
   * Mutates.
   */
  discardInFlight(placeholder?: number): void {
    this.tokens.length = this.prompt.length + this.output.length;
    if (placeholder !== undefined) this.tokens.push(placeholder);
  }

  /** The bonus token x_L (verified, no KV yet). */
  get bonusToken(): number {
    return this.tokens[this.targetKvLength];
  }

  /** This round's root token: the launch-time resolution under overlap, else x_L. */
  get rootToken(): number {
    return this.launch?.token ?? this.bonusToken;
  }

  /** This round's draft root (d_1's candidates) and the hidden state produced with it. */
  get rootDraft(): TopK | undefined {
    return this.launch?.draftRoot ?? this.draftRoot;
  }

  get rootHidden(): HiddenRows | undefined {
    return this.launch?.draftHidden ?? this.draftHidden;
  }

  /**
   * Appends generated tokens, cut at the first of EOS, a stop id (both kept), a stop string's end (the token
   * holding its last character kept), the grammar's end or max new tokens: nothing past
   * it is emitted. `logprobs[i]` is candidate i's entry (requests asking for logprobs). Mutates; returns the
   * tokens emitted and whether the request finished. (Under overlap the device appended the uncut candidates
   * to `tokens` when it computed them; this processes the output.)
   */
  emit(
    candidates: readonly number[],
    eosId: number,
    faults: Faults,
    logprobs?: readonly (LogprobEntry | undefined)[],
    /** Overlap: the device already appended the candidates to `tokens`; only the output is processed here. */
    deviceAdvanced = false,
  ): { emitted: number[]; finished: boolean } {
    const emitted: number[] = [];
    // sglang issue 31599: a run reaching the cap was cut by length before its stop tokens were looked at.
    const lengthFirst =
      faults.has("length-before-stop") &&
      candidates.length > 1 &&
      this.output.length + candidates.length >= this.maxNewTokens;
    for (const [i, token] of candidates.entries()) {
      if (this.output.length >= this.maxNewTokens) break;
      emitted.push(token);
      this.output.push(token);
      if (!deviceAdvanced) this.tokens.push(token);
      const entry = logprobs?.[i];
      if (entry) this.logprobs.push(entry);
      // The token's text is checked at once: a stop string ending in it ends the request here (stop-strings.ts).
      const stopString = this.text?.append(token) ?? false;
      if (!lengthFirst && token === eosId) {
        this.finish("eos");
        break;
      }
      if (!lengthFirst && this.stopTokenIds.has(token)) {
        this.finish("stop");
        this.stopTokenId = token;
        break;
      }
      if (stopString) {
        this.finish("stop");
        break;
      }
      // A grammar reaching its end state finishes the request at that token, wherever it falls in the run.
      if (this.grammar?.advance(token)) {
        this.finish("stop");
        break;
      }
      if (this.output.length >= this.maxNewTokens) break;
    }
    if (this.status !== "finished" && this.output.length >= this.maxNewTokens) this.finish("length");
    // sglang#23802 / #27637: stop strings looked for once per round, on the tail of the run's text.
    if (faults.has("stop-string-checked-at-round-end") && this.status !== "finished" && this.text?.checkRoundEnd())
      this.finish("stop");
    this.text?.stream(emitted, this.status === "finished", candidates.length);
    this.penalizer.cumulate(emitted, faults);
    return { emitted, finished: this.status === "finished" };
  }

  finish(reason: EndReason): void {
    this.status = "finished";
    this.finishReason = reason;
    this.draftRoot = undefined;
    this.draftHidden = undefined;
    this.targetHidden.clear();
    this.pendingExtends.length = 0;
  }
}
