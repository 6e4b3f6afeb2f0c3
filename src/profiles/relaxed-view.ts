// The trace a law sees under a profile: the profile's relaxations whose effects name the law, applied in
// stage order. Each transform is computed and logged once per trace, however many laws share it, so the
// report's counts say how often a relaxation changed something, not how often it was consulted.
import type { Trace } from "../trace/schema.ts";
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
  private readonly logged = new WeakMap<Trace, Set<string>>();

  constructor(
    readonly profile: Profile,
    readonly log: RelaxationLog,
  ) {}

  private once(trace: Trace, key: string): boolean {
    let seen = this.logged.get(trace);
    if (!seen) this.logged.set(trace, (seen = new Set()));
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
}
