// The trace a law sees under a profile: the profile's relaxations whose effects name the law, applied in
// stage order. Each transform is computed and logged once per trace, however many laws share it, so the
// report's counts say how often a relaxation changed something, not how often it was consulted.
import type { Case } from "../case/case.ts";
import type { ModelSpec } from "../model/spec.ts";
import type { Trace } from "../trace/schema.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import type { Profile, RelaxationLog } from "./profiles.ts";

export interface RelaxedView {
  trace: Trace;
  /** Relaxations that changed what the law sees. */
  relaxedBy: string[];
  /** Set when a relaxation makes the law not checkable on this trace. */
  disabled?: { relaxation: string; reason: string };
}

export class RelaxedViews {
  /** Per original trace: the view reached after a chain of relaxation ids. */
  private readonly memo = new WeakMap<Trace, Map<string, { trace: Trace; relaxedBy: string[] }>>();
  private readonly logged = new WeakMap<object, Set<string>>();
  /** Per outputs array: what each chain of output relaxations made of it. */
  private readonly outputMemo = new WeakMap<readonly RequestOutput[], Map<string, readonly RequestOutput[]>>();

  constructor(
    readonly profile: Profile,
    readonly log: RelaxationLog,
  ) {}

  private once(subject: object, key: string): boolean {
    let seen = this.logged.get(subject);
    if (!seen) this.logged.set(subject, (seen = new Set()));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  }

  viewFor(law: string, trace: Trace): RelaxedView {
    const relaxations = [...this.profile.relaxations]
      .filter((relaxation) => relaxation.effects.some((effect) => effect.law === law))
      .sort((a, b) => a.stage - b.stage);
    for (const relaxation of relaxations) {
      for (const effect of relaxation.effects) {
        const detail = effect.law === law ? effect.disables?.(trace) : undefined;
        if (detail === undefined) continue;
        if (this.once(trace, `${relaxation.id}:${law}`))
          this.log.record(relaxation, 1, `${law} not checked (${detail})`);
        return {
          trace,
          relaxedBy: [relaxation.id],
          disabled: { relaxation: relaxation.id, reason: `relaxed by profile ${this.profile.name}: ${relaxation.id}` },
        };
      }
    }
    let memo = this.memo.get(trace);
    if (!memo) this.memo.set(trace, (memo = new Map()));
    let view = { trace, relaxedBy: [] as string[] };
    let chain = "";
    for (const relaxation of relaxations) {
      const transform = relaxation.effects.find((effect) => effect.law === law && effect.transform)?.transform;
      if (!transform) continue;
      chain += `/${relaxation.id}`;
      const known = memo.get(chain);
      if (known) {
        view = known;
        continue;
      }
      const result = transform(view.trace);
      if (this.once(trace, relaxation.id)) this.log.record(relaxation, result.applied, result.detail);
      view = result.applied === 0 ? view : { trace: result.trace, relaxedBy: [...view.relaxedBy, relaxation.id] };
      memo.set(chain, view);
    }
    return view;
  }

  /**
   * The outputs a law reads under the profile: its output relaxations applied in stage order, each computed and
   * logged once per outputs array (a run's and its baseline's are read from their own tokens).
   */
  outputsFor(
    law: string,
    testCase: Readonly<Case>,
    outputs: readonly RequestOutput[],
    spec: ModelSpec,
  ): { outputs: readonly RequestOutput[]; relaxedBy: string[] } {
    let memo = this.outputMemo.get(outputs);
    if (!memo) this.outputMemo.set(outputs, (memo = new Map()));
    let current = outputs;
    const relaxedBy: string[] = [];
    const relaxations = [...this.profile.relaxations].sort((a, b) => a.stage - b.stage);
    for (const relaxation of relaxations) {
      const transform = relaxation.effects.find((effect) => effect.law === law && effect.outputs)?.outputs;
      if (!transform) continue;
      const key = `${relaxedBy.join("/")}>${relaxation.id}`;
      let next = memo.get(key);
      if (!next) {
        const result = transform(testCase, current, spec);
        if (this.once(outputs, relaxation.id)) this.log.record(relaxation, result.applied, result.detail);
        next = result.applied === 0 ? current : result.outputs;
        memo.set(key, next);
      }
      if (next !== current) relaxedBy.push(relaxation.id);
      current = next;
    }
    return { outputs: current, relaxedBy };
  }
}
