// `specconf report FILE`: one self-contained HTML page for a shrunk failure (issue 27): the laws checked on
// its case, the case, the draft tree of the failing round, the failing run's step table next to the run it
// is compared with (the reference engine's for an external engine's failure, the same case with its faults
// off for a planted fault) with the first divergence marked, and both runs' accept-length histograms.
import { runCommandBody } from "../errors/exit.ts";
import { loadReplayInput } from "../failures/replay-input.ts";
import { failureView } from "../report/failure-view.ts";
import { render } from "../report/reporters.ts";
import { defineFlags, parseFlags, renderHelp, UsageError } from "./args.ts";
import { checkOutputPaths, writeOutputFile } from "./output-paths.ts";

const FLAGS = defineFlags({
  out: {
    type: "string",
    valueName: "FILE",
    description: "the HTML file to write (default: the record's name with .html)",
  },
});

export function reportCommand(argv: string[]): Promise<number> {
  return runCommandBody("report", () => report(argv));
}

async function report(argv: string[]): Promise<number> {
  const { values, positionals, help } = parseFlags(FLAGS, argv, { allowPositionals: true });
  if (help) {
    process.stdout.write(
      renderHelp(FLAGS, {
        usage: "specconf report FILE [--out FILE.html]",
        summary:
          "Write one self-contained HTML page for a failure record (.specconf/failures/*.json): verdicts, the shrunk case, the failing round's draft tree, both runs' step tables with the first divergence marked, accept-length histograms.",
      }),
    );
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? "missing FILE (a failure record)" : `expected one FILE, got ${positionals.length}`,
    );
  const file = positionals[0];
  const out = values.out ?? file.replace(/\.json$/, "") + ".html";
  checkOutputPaths([{ flag: "--out", path: out, kind: "file" }], [{ flag: "FILE", path: file }]);
  const input = loadReplayInput(file);
  if (input.kind !== "failure")
    throw new UsageError(`${file} is a case file: report reads failure records (.specconf/failures/*.json)`);
  const { laws, ...failure } = await failureView(file, { verdicts: true });
  const record = input.record;
  const verdicts =
    laws ??
    record.laws.map((law, i) => ({
      law,
      status: "fails" as const,
      checked: 0,
      ties: 0,
      ...(i === 0 ? { violation: { message: record.violation.message } } : {}),
    }));
  const failing = verdicts.filter((law) => law.status === "fails").map((law) => law.law);
  // A replay's summary, rendered by the report module's "html" reporter with the failure drawn.
  const html = render(
    {
      command: "replay",
      summary: {
        file,
        reproduced: record.laws.some((law) => failing.includes(law)),
        exact: false,
        recordedLaws: record.laws,
        identicalTrace: null,
        crash: null,
        skipped: null,
        laws: verdicts,
      },
      text: { lines: [] },
      failures: [failure],
    },
    "html",
  );
  writeOutputFile("--out", out, html);
  process.stdout.write(`${out}\n`);
  return 0;
}
