// Profiles: engine conventions that differ from the reference's exact semantics (docs/design.md section 5).
// A profile never accepts anything silently: each relaxation is named, says which engine behaviour it
// accounts for and what specconf does about it, and the report states how often it was applied. The laws a
// relaxation touches are named here as data (its effects); the laws themselves never know about profiles.
import type { Case } from "../case/case.ts";
import type { ModelSpec } from "../model/spec.ts";
import type { Trace } from "../trace/schema.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { translateStopChoice, type StopChoiceConvention } from "./stop-choice.ts";
import {
  declareSharedPrefixes,
  dropPaddedExtendRows,
  isMultiLayer,
  stripDraftDecodeAttention,
  type Transformed,
} from "./relax.ts";
import { traceTopk } from "../laws/draft-tree.ts";

/** What a relaxation does to one law's view of a trace. */
export interface RelaxationEffect {
  /** The law (by name) whose view it changes. */
  law: string;
  /** Rewrites the trace the law sees; `applied` 0 when nothing matched. */
  transform?: (trace: Trace) => Transformed;
  /** Makes the law not checkable on this trace: the detail logged, or undefined where it does not apply. */
  disables?: (trace: Trace) => string | undefined;
  /** Rewrites the outputs the law reads (a run's and its baseline's, each from its own tokens). */
  outputs?: (
    testCase: Readonly<Case>,
    outputs: readonly RequestOutput[],
    spec: ModelSpec,
  ) => { outputs: RequestOutput[]; applied: number; detail: string };
}

export interface Relaxation {
  id: string;
  /** Transforms apply in stage order (padding is dropped before attention is judged per lane). */
  stage: number;
  effects: readonly RelaxationEffect[];
  /** The engine's documented behaviour. */
  convention: string;
  /** What specconf does instead of the exact check. */
  effect: string;
  /** Laws or output checks it touches. */
  laws: readonly string[];
}

export interface Profile {
  name: string;
  description: string;
  relaxations: readonly Relaxation[];
}

/** A stop-string choice convention (stop-choice.ts) as the effects on the two laws that read the choice. */
function stopChoiceEffects(convention: StopChoiceConvention): RelaxationEffect[] {
  return ["stop string end", "stop trim"].map((law) => ({
    law,
    outputs: (testCase, outputs, spec) => translateStopChoice(testCase, outputs, spec, convention),
  }));
}

const STOP_CHOICE_EFFECT =
  "a detokenized request whose text and stop string are exactly what the engine's rule gives, where the reference's first-ending occurrence is another one, is read as the reference's text and stop string by stop string end and stop trim; any other text, and every token, is judged unchanged";

export const RELAXATIONS = {
  treeDraftPerLane: {
    id: "tree-draft-per-lane-attention",
    stage: 1,
    effects: [
      {
        law: "positions",
        transform: (trace) =>
          traceTopk(trace) > 1 ? stripDraftDecodeAttention(trace) : { trace, applied: 0, detail: "" },
      },
      { law: "draft reference", disables: (trace) => (traceTopk(trace) > 1 ? "topk > 1" : undefined) },
    ],
    convention:
      "SGLang's tree draft decode (topk > 1) attends per lane (each of the topk lanes sees its own earlier rows), not per ancestor: an approximation of the tree",
    effect:
      "with topk > 1, draft-decode rows' attended sets are not checked by positions, and draft reference is not checkable",
    laws: ["positions", "draft reference"],
  },
  multiLayerKeptKv: {
    id: "multi-layer-kept-draft-kv",
    stage: 1,
    effects: [{ law: "draft reference", disables: (trace) => (isMultiLayer(trace) ? "multi-layer trace" : undefined) }],
    convention:
      "SGLang's multi-layer (MTP) drafting keeps, instead of recomputing, the draft KV of rows whose input token was a draft",
    effect: "in multi-layer traces draft reference is not checkable",
    laws: ["draft reference"],
  },
  extendPadding: {
    id: "draft-extend-padded-rows",
    stage: 0,
    effects: ["positions", "rows carry request tokens", "phase contracts", "draft reference"].map((law) => ({
      law,
      transform: dropPaddedExtendRows,
    })),
    convention:
      "SGLang spec v2's draft extend after verify runs a fixed num_draft_tokens rows per request, padding beyond accept_len",
    effect:
      "draft-extend rows of a request beyond its last accept_len are dropped before positions, row tokens, phase contracts and draft reference",
    laws: ["positions", "rows carry request tokens", "phase contracts", "draft reference"],
  },
  seqLensExcludeBonus: {
    id: "seq-lens-exclude-bonus",
    stage: 0,
    effects: [],
    convention:
      "SGLang's batch.seq_lens excludes the pending bonus token while request lengths (origin_input_ids + output_ids) include it",
    effect:
      "none needed: traces carry positions read from the tensors and requests' full outputs; named so a trace built from seq_lens is read with it in mind",
    laws: [],
  },
  radixSharedPrefix: {
    id: "radix-shared-prefix",
    stage: 2,
    effects: [{ law: "positions", transform: declareSharedPrefixes }],
    convention:
      "SGLang's radix cache shares a prompt prefix's KV between requests: slots are reference-counted and a request's first persisted write may start past position 0",
    effect:
      "positions treats a request's KV below its first persisted write as a shared prefix (counted per request and pool)",
    laws: ["positions"],
  },
  acceptLengthDraftsOnly: {
    id: "accept-length-drafts-only",
    stage: 0,
    effects: [],
    convention:
      "SGLang spec v1 reports accept_length as accepted drafts, without the bonus (v2's accept_lens include it)",
    effect: "outputs' acceptLens are read as drafts only: 1 is added before comparing",
    laws: ["accept lengths"],
  },
  stopChoiceEarliestStart: {
    id: "stop-string-earliest-start-in-token",
    stage: 0,
    effects: stopChoiceEffects({ rule: "earliest-start", window: "token" }),
    convention:
      "llama.cpp's server checks the stop strings after every token (server_slot::find_stopping_strings from process_token) and, of those ending in that token, reports the one starting first (a tie: the one listed first)",
    effect: STOP_CHOICE_EFFECT,
    laws: ["stop string end", "stop trim"],
  },
  stopChoiceListOrder: {
    id: "stop-string-list-order-in-step",
    stage: 0,
    effects: stopChoiceEffects({ rule: "list-order", window: "step" }),
    convention:
      "vLLM (check_stop_strings) and SGLang (Req._check_str_based_finish) check the stop strings once per engine step, over the text the step added, and report the first one in the request's list that occurs there (the step: the output's streamed deltas, else each token)",
    effect: STOP_CHOICE_EFFECT,
    laws: ["stop string end", "stop trim"],
  },
} as const satisfies Record<string, Relaxation>;

const SGLANG_V2: readonly Relaxation[] = [
  RELAXATIONS.stopChoiceListOrder,
  RELAXATIONS.treeDraftPerLane,
  RELAXATIONS.multiLayerKeptKv,
  RELAXATIONS.extendPadding,
  RELAXATIONS.seqLensExcludeBonus,
  RELAXATIONS.radixSharedPrefix,
];

export const PROFILES: Record<string, Profile> = {
  strict: { name: "strict", description: "the reference engine's exact semantics: no relaxation", relaxations: [] },
  sglang: { name: "sglang", description: "SGLang (speculative v2) conventions", relaxations: SGLANG_V2 },
  "sglang-v1": {
    name: "sglang-v1",
    description: "SGLang speculative v1: the sglang relaxations plus v1's drafts-only accept_length",
    relaxations: [...SGLANG_V2, RELAXATIONS.acceptLengthDraftsOnly],
  },
  // The engines' own profiles: the conventions read from their source, each its engine's declared reading.
  "llama-server": {
    name: "llama-server",
    description: "llama.cpp's server: its stop-string choice (the stop string starting first in a token)",
    relaxations: [RELAXATIONS.stopChoiceEarliestStart],
  },
  vllm: {
    name: "vllm",
    description: "vLLM: its stop-string choice (the first listed stop string in a step)",
    relaxations: [RELAXATIONS.stopChoiceListOrder],
  },
};

export function profileNames(): string[] {
  return Object.keys(PROFILES);
}

export function hasRelaxation(profile: Profile, relaxation: Relaxation): boolean {
  return profile.relaxations.some((candidate) => candidate.id === relaxation.id);
}

/** How often each relaxation of the profile changed something in this validation. */
export class RelaxationLog {
  private readonly counts = new Map<string, { applied: number; details: string[] }>();

  constructor(readonly profile: Profile) {
    for (const relaxation of profile.relaxations) this.counts.set(relaxation.id, { applied: 0, details: [] });
  }

  record(relaxation: Relaxation, count: number, detail: string): void {
    const entry = this.counts.get(relaxation.id);
    if (!entry || count === 0) return;
    entry.applied += count;
    if (entry.details.length < 5) entry.details.push(detail);
  }

  /** Counts recorded elsewhere (check --workers: each worker's own log), added to this one's. */
  absorb(counts: ReadonlyMap<string, { applied: number; details: readonly string[] }>): void {
    for (const [id, other] of counts) {
      const entry = this.counts.get(id);
      if (!entry) continue;
      entry.applied += other.applied;
      entry.details.push(...other.details.slice(0, 5 - entry.details.length));
    }
  }

  entries(): {
    id: string;
    convention: string;
    effect: string;
    laws: readonly string[];
    applied: number;
    details: string[];
  }[] {
    return this.profile.relaxations.map(({ id, convention, effect, laws }) => ({
      id,
      convention,
      effect,
      laws,
      ...this.counts.get(id)!,
    }));
  }
}
