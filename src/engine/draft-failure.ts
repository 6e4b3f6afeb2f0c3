// The fault "draft-failure-plain-decode" (issue 34): a round's draft forward fails and the engine decodes the
// round's token without speculating, saying nothing. llama.cpp's own failure path: draft-simple's draft()
// (common/speculative.cpp) returns with no draft when llama_decode on the draft context fails, and the server
// then decodes the sampled token alone (server-context.cpp, handle_last_sampled_token with spec_draft empty);
// the outputs stay exact, so only a liveness law sees it. Here the draft "fails" for every round whose bonus
// sits at an even position (a condition on the request's state, as a draft KV that finds no slot is), and the
// round runs as a round with speculation off does (engine/draft-schedule.ts): the bonus verified alone, the draft
// KV caught up over the skipped positions when drafting resumes. Chain drafting with a draft model only: prompt
// lookup runs no draft forward, and trees, multi-layer modules and overlap do not switch speculation per round.
import type { EngineConfig } from "../case/engine-config.ts";
import { capsLookahead } from "../case/context-limit.ts";
import type { Faults } from "../case/faults.ts";

/** Whether the fault makes the draft of the round whose bonus sits at `bonusPosition` fail (the fault's one site). */
export function draftFails(config: EngineConfig, ngram: boolean, faults: Faults, bonusPosition: number): boolean {
  if (!faults.has("draft-failure-plain-decode")) return false;
  return config.mode === "speculative" && !ngram && capsLookahead(config) && bonusPosition % 2 === 0;
}
