// Profiles: each SGLang convention, synthesized into a clean reference trace or outputs, fails under
// strict and holds under the profile that names it, and the report names every relaxation of the
// profile with how often it was applied.
import { describe, expect, it } from "vitest";
import { POSITIONS } from "../../src/laws/positions.ts";
import { DRAFT_REFERENCE } from "../../src/laws/draft-reference.ts";
import { ROW_TOKENS } from "../../src/laws/row-tokens.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { PROFILES, RELAXATIONS } from "../../src/profiles/profiles.ts";
import { render } from "../../src/report/reporters.ts";
import type { ValidationReport } from "../../src/validate/validate.ts";
import { failing, reference, validateRun } from "../helpers/golden-runs.ts";
import { editRows, padDraftExtend } from "../helpers/trace-edits.ts";

const renderReport = (report: ValidationReport) => render({ command: "validate", summary: report }, "text");

function relaxation(report: ValidationReport, id: string) {
  return report.profile.relaxations.find((entry) => entry.id === id)!;
}

/** Request 0's first `shared` positions come from a radix-cache prefix: no prefill or draft-extend rows for them. */
function sharePrefix(trace: Trace, shared: number): Trace {
  const out = editRows(trace, (event) => {
    if (event.phase !== "prefill" && event.phase !== "draft-extend") return undefined;
    return event.rows
      .map((row, index) => [row, index] as const)
      .filter(([row]) => row.request !== 0 || row.position >= shared) as [(typeof event.rows)[number], number][];
  });
  // The shared positions are now attended from the cache (persisted ranges), not as rows of the same forward.
  const seenRequest0 = new Set<string>();
  for (const event of out.events) {
    if (event.phase !== "prefill" && event.phase !== "draft-extend") continue;
    const pool = event.pool ?? event.phase;
    if (seenRequest0.has(pool)) continue;
    for (const row of event.rows) {
      if (row.request === 0 && row.attended) {
        row.attended = { ...row.attended, positions: [[0, shared - 1], ...row.attended.positions] };
        seenRequest0.add(pool);
      }
    }
  }
  return out;
}

describe("profiles", () => {
  it("sglang: spec v2's padded draft extend fails strict, holds with draft-extend-padded-rows named", async () => {
    const run = await reference("tiny-eagle", "unchunked-s2");
    const padded = padDraftExtend(run.trace);
    const strict = await validateRun("tiny-eagle", "unchunked-s2", run.lines, padded, PROFILES.strict);
    // Padding rows carry rejected drafts at anchors whose next token was never verified.
    expect(failing(strict).trace).toEqual([DRAFT_REFERENCE, POSITIONS, ROW_TOKENS].sort());
    const sglang = await validateRun("tiny-eagle", "unchunked-s2", run.lines, padded, PROFILES.sglang);
    expect(failing(sglang)).toEqual({ outputs: [], trace: [] });
    expect(relaxation(sglang, RELAXATIONS.extendPadding.id).applied).toBeGreaterThan(0);
    const positions = sglang.traces[0].laws.find((law) => law.law === POSITIONS)!;
    expect(positions.relaxedBy).toEqual([RELAXATIONS.extendPadding.id]);
    // The unpadded trace needs no relaxation: the profile changes nothing there.
    const clean = await validateRun("tiny-eagle", "unchunked-s2", run.lines, run.trace, PROFILES.sglang);
    expect(clean.profile.relaxations.every((entry) => entry.applied === 0)).toBe(true);
  });

  it("sglang: a radix-cache shared prefix fails strict positions, holds with radix-shared-prefix named", async () => {
    const run = await reference("tiny-mirror", "unchunked");
    const shared = sharePrefix(run.trace, 5);
    const strict = await validateRun("tiny-mirror", "unchunked", run.lines, shared, PROFILES.strict);
    expect(failing(strict).trace).toEqual([POSITIONS]);
    const sglang = await validateRun("tiny-mirror", "unchunked", run.lines, shared, PROFILES.sglang);
    expect(failing(sglang)).toEqual({ outputs: [], trace: [] });
    expect(relaxation(sglang, RELAXATIONS.radixSharedPrefix.id).applied).toBe(2); // target and draft pool of request 0
  });

  it("sglang: tree drafting makes draft reference not checkable, named tree-draft-per-lane-attention", async () => {
    const run = await reference("tiny-mirror", "tree");
    const strict = await validateRun("tiny-mirror", "tree", run.lines, run.trace, PROFILES.strict);
    expect(strict.traces[0].laws.find((law) => law.law === DRAFT_REFERENCE)?.status).toBe("holds");
    const sglang = await validateRun("tiny-mirror", "tree", run.lines, run.trace, PROFILES.sglang);
    const draft = sglang.traces[0].laws.find((law) => law.law === DRAFT_REFERENCE)!;
    expect(draft.status).toBe("not-checkable");
    expect(draft.relaxedBy).toEqual([RELAXATIONS.treeDraftPerLane.id]);
    expect(draft.reason).toContain("tree-draft-per-lane-attention");
  });

  it("sglang-v1: drafts-only accept_length fails strict, holds with accept-length-drafts-only named", async () => {
    const run = await reference("tiny-mirror", "unchunked");
    const v1 = run.lines.map((line) => ({ ...line, acceptLens: line.acceptLens?.map((len) => len - 1) }));
    const strict = await validateRun("tiny-mirror", "unchunked", v1, undefined, PROFILES.strict);
    expect(failing(strict).outputs).toEqual(["accept lengths"]);
    expect(strict.requests[0].checks.find((check) => check.law === "accept lengths")?.violation?.message).toMatch(
      /accept length 3, golden 4/,
    );
    const relaxed = await validateRun("tiny-mirror", "unchunked", v1, undefined, PROFILES["sglang-v1"]);
    expect(failing(relaxed)).toEqual({ outputs: [], trace: [] });
    expect(relaxation(relaxed, RELAXATIONS.acceptLengthDraftsOnly.id).applied).toBeGreaterThan(0);
  });

  it("the report names every relaxation of the profile, applied or not", async () => {
    const run = await reference("tiny-eagle", "unchunked-s2");
    const report = await validateRun(
      "tiny-eagle",
      "unchunked-s2",
      run.lines,
      padDraftExtend(run.trace),
      PROFILES.sglang,
    );
    const text = renderReport(report);
    for (const entry of PROFILES.sglang.relaxations) expect(text).toContain(entry.id);
    expect(text).toMatch(/draft-extend-padded-rows: .*applied \d+x/);
    expect(text).toMatch(/seq-lens-exclude-bonus: .*not triggered/);
    expect(text).toContain("[relaxed: draft-extend-padded-rows]");
    // strict has no relaxation to name.
    expect(renderReport(await validateRun("tiny-eagle", "unchunked-s2", run.lines, run.trace))).not.toContain(
      "relaxations",
    );
  });
});
