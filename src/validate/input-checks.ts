// What the schemas of another engine's outputs lines and traces cannot say, checked against the golden
// case before any law runs: token ids inside the vocabulary, accept lengths a round can have, positions
// the model has, rows of the case's own requests, event indices unique, a trace with events at all. Such
// input is bad input (exit 2, naming the file and JSON path), not a law's pass or failure.
import type { GoldenCase } from "../golden/schema.ts";
import type { ModelSpec } from "../model/spec.ts";
import type { ValidationIssue } from "../schema/validator.ts";
import type { Trace } from "../trace/schema.ts";
import type { OutputLine } from "../trace/outputs-line.ts";

function tokenIssues(tokens: readonly number[] | undefined, path: string, vocab: number): ValidationIssue[] {
  const at = tokens?.findIndex((token) => token >= vocab) ?? -1;
  return at < 0
    ? []
    : [{ path: `${path}/${at}`, message: `token ${tokens![at]} is outside the vocabulary (${vocab})` }];
}

/** An outputs line against its golden case (the line's case and id are known to exist). */
export function outputLineIssues(line: OutputLine, goldenCase: GoldenCase, spec: ModelSpec): ValidationIssue[] {
  const numSteps = goldenCase.case.engine.numSteps;
  const issues = [
    ...tokenIssues(line.tokens, "/tokens", spec.vocab),
    ...tokenIssues(line.firstRoundDrafts, "/firstRoundDrafts", spec.vocab),
  ];
  // A round accepts at most S drafts plus the bonus (v1 engines report drafts only: 0..S).
  const badLen = line.acceptLens?.findIndex((len) => len > numSteps + 1) ?? -1;
  if (badLen >= 0)
    issues.push({
      path: `/acceptLens/${badLen}`,
      message: `${line.acceptLens![badLen]} is more than numSteps + 1 = ${numSteps + 1} (case '${goldenCase.name}')`,
    });
  if (line.firstRoundDrafts && line.firstRoundDrafts.length > numSteps)
    issues.push({
      path: "/firstRoundDrafts",
      message: `has ${line.firstRoundDrafts.length} drafts, more than numSteps ${numSteps} (case '${goldenCase.name}')`,
    });
  return issues;
}

/** A trace against the golden case it was matched to. */
export function traceIssues(trace: Trace, goldenCase: GoldenCase, spec: ModelSpec): ValidationIssue[] {
  if (trace.events.length === 0) return [{ path: "/events", message: "has no events: there is nothing to check" }];
  const ids = new Set(goldenCase.case.workload.requests.map((request) => request.id));
  const issues: ValidationIssue[] = [];
  const seen = new Map<number, number>();
  trace.events.forEach((event, e) => {
    const at = `/events/${e}`;
    const earlier = seen.get(event.index);
    if (earlier !== undefined)
      issues.push({
        path: `${at}/index`,
        message: `duplicate event index ${event.index} (also /events/${earlier}/index)`,
      });
    else seen.set(event.index, e);
    event.rows.forEach((row, r) => {
      const here = `${at}/rows/${r}`;
      if (!ids.has(row.request))
        issues.push({ path: `${here}/request`, message: `case '${goldenCase.name}' has no request ${row.request}` });
      if (row.token >= spec.vocab)
        issues.push({ path: `${here}/token`, message: `token ${row.token} is outside the vocabulary (${spec.vocab})` });
      if (row.predict !== undefined && row.predict >= spec.vocab)
        issues.push({
          path: `${here}/predict`,
          message: `token ${row.predict} is outside the vocabulary (${spec.vocab})`,
        });
      if (row.position < 0 || row.position >= spec.maxPositions)
        issues.push({
          path: `${here}/position`,
          message: `${row.position} is outside the model's positions [0, ${spec.maxPositions})`,
        });
    });
    event.verify?.forEach((result, v) => {
      const here = `${at}/verify/${v}`;
      if (!ids.has(result.request))
        issues.push({ path: `${here}/request`, message: `case '${goldenCase.name}' has no request ${result.request}` });
      if (result.bonus >= spec.vocab)
        issues.push({
          path: `${here}/bonus`,
          message: `token ${result.bonus} is outside the vocabulary (${spec.vocab})`,
        });
    });
  });
  trace.requests?.forEach((request, i) =>
    issues.push(...tokenIssues(request.output, `/requests/${i}/output`, spec.vocab)),
  );
  return issues;
}
