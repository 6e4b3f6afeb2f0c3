// Generated EAGLE-3 cases on the oracle (check --eagle3-oracle, issue 34): every EAGLE-3 head drawn is the oracle
// head (model/eagle3-oracle.ts) on its target, the bigram preset, so law "mirror acceptance" judges its rounds (a
// random head accepts nearly nothing, and leaves an engine's EAGLE-3 drafts compared with nothing). A space that
// draws the EAGLE-3 mirror (the mirror-acceptance property's) draws the oracle beside it: engines that cannot load
// the mirror (llama.cpp's eagle3 has no form for it) load the oracle. Off by default: the default spaces, and
// with them every checked-in kill's seed and path, stay as they are.
import type { DraftKind } from "../../model/spec.ts";
import type { CaseSpace } from "./space.ts";

/** The oracle's target: the bigram family's preset (model/presets.ts). */
export const ORACLE_PRESET = "bigram";

export function withEagle3Oracle<S extends Pick<CaseSpace, "drafts" | "eagle3Oracle">>(space: S): S {
  const drafts: readonly DraftKind[] =
    space.drafts.includes("eagle3-mirror") && !space.drafts.includes("eagle3")
      ? [...space.drafts, "eagle3"]
      : space.drafts;
  return { ...space, drafts, eagle3Oracle: true };
}
