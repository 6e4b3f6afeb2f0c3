// Bad input to `specconf validate` (malformed JSON, schema violations, unknown format versions, unknown
// cases and ids, duplicate requests, truncated files, huge lines and documents, digest mismatches): each
// is exit 2 with one line naming the file (and line) and the JSON path, nothing on stdout, nothing
// written, and the golden file untouched. A fast-check property generates the malformed outputs files.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateCommand } from "../../src/cli/validate.ts";
import { InputError } from "../../src/schema/input-error.ts";
import { PROFILES } from "../../src/profiles/profiles.ts";
import { validate } from "../../src/validate/validate.ts";
import { jsonLines } from "../../src/validate/write.ts";
import { readDocument } from "../../src/golden/load.ts";
import { capture } from "../helpers/capture.ts";
import { reference } from "../helpers/golden-runs.ts";

const GOLDEN = "golden/tiny-mirror.json";
const CASE = "unchunked";
let dir: string;
let lines: Record<string, unknown>[];
let trace: Record<string, unknown>;

function fingerprint(path: string): string {
  return `${createHash("sha256").update(readFileSync(path)).digest("hex")}:${statSync(path).mtimeMs}`;
}
const goldenBefore = fingerprint(GOLDEN);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "specconf-bad-input-"));
  const run = await reference("tiny-mirror", CASE);
  lines = run.lines as unknown as Record<string, unknown>[];
  trace = run.trace as unknown as Record<string, unknown>;
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  expect(fingerprint(GOLDEN), "validate modified the golden file").toBe(goldenBefore);
});

let counter = 0;
function file(text: string, name = "outputs.jsonl"): string {
  const path = join(dir, `${counter++}-${name}`);
  writeFileSync(path, text);
  return path;
}

async function run(args: string[]) {
  const report = join(dir, `report-${counter++}.json`);
  const result = await capture(() => validateCommand([...args, "--case", CASE, "--report", report]));
  return { ...result, reportWritten: existsSync(report) };
}

/** The one-line error shape: `specconf validate: FILE[:LINE]: [/json/path: ]what`. */
function expectBadInput(
  result: { code: number; stdout: string; stderr: string; reportWritten: boolean },
  where: string,
  path?: string,
): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.reportWritten).toBe(false);
  expect(result.stderr.endsWith("\n")).toBe(true);
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(result.stderr.startsWith(`specconf validate: ${where}: `), result.stderr).toBe(true);
  if (path !== undefined) expect(result.stderr, result.stderr).toContain(`${where}: ${path}`);
}

type Mutation = { kind: string; text: string; where: (path: string) => string; pointer?: string };

/** Malformed variants of a valid outputs file; each names where the error must be reported. */
function mutations(): fc.Arbitrary<Mutation> {
  const n = () => fc.integer({ min: 0, max: lines.length - 1 });
  const at = (line: number) => (path: string) => `${path}:${line + 1}`;
  const withLine = (index: number, value: unknown) => jsonLines(lines.map((line, i) => (i === index ? value : line)));
  const fieldValues = fc.constantFrom<[string, unknown]>(
    ["tokens", "abc"],
    ["tokens", [1, -5]],
    ["tokens", [1.5]],
    ["id", -1],
    ["id", "0"],
    ["acceptLens", [4, "x"]],
    ["finishReason", "stop"],
    ["firstRoundDrafts", {}],
  );
  return fc.oneof(
    n().chain((i) =>
      fc.integer({ min: 1, max: JSON.stringify(lines[i]).length - 1 }).map((cut): Mutation => {
        const text = jsonLines(lines.slice(0, i)) + JSON.stringify(lines[i]).slice(0, cut);
        return { kind: "truncated", text, where: at(i) };
      }),
    ),
    n().map((i): Mutation => ({
      kind: "syntax",
      text: jsonLines(lines)
        .split("\n")
        .map((line, k) => (k === i ? line.replace("{", "{,,") : line))
        .join("\n"),
      where: at(i),
    })),
    fc.tuple(n(), fieldValues).map(([i, [field, value]]): Mutation => ({
      kind: `schema ${field}`,
      text: withLine(i, { ...lines[i], [field]: value }),
      where: at(i),
      pointer: `/${field}`,
    })),
    fc.tuple(n(), fc.constantFrom("formatVersion", "case", "id", "tokens")).map(([i, field]): Mutation => {
      const { [field]: _, ...rest } = lines[i];
      return { kind: `missing ${field}`, text: withLine(i, rest), where: at(i), pointer: `/${field}` };
    }),
    fc
      .tuple(
        n(),
        fc
          .string({ minLength: 1, maxLength: 8 })
          .filter(
            (key) =>
              !["formatVersion", "case", "id", "tokens", "finishReason", "acceptLens", "firstRoundDrafts"].includes(
                key,
              ) && !/[~/]/.test(key),
          ),
      )
      .map(([i, key]): Mutation => ({
        kind: "extra property",
        text: withLine(i, { ...lines[i], [key]: 1 }),
        where: at(i),
        pointer: `/${key}`,
      })),
    fc
      .tuple(
        n(),
        fc.integer({ min: -5, max: 1000 }).filter((version) => version !== 1),
      )
      .map(([i, version]): Mutation => ({
        kind: "format version",
        text: withLine(i, { ...lines[i], formatVersion: version }),
        where: at(i),
        pointer: "/formatVersion",
      })),
    fc
      .tuple(
        n(),
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((name) => !["unchunked", "chunked-paged", "tree"].includes(name)),
      )
      .map(([i, name]): Mutation => ({
        kind: "unknown case",
        text: withLine(i, { ...lines[i], case: name }),
        where: at(i),
        pointer: "/case",
      })),
    fc.tuple(n(), fc.integer({ min: 4, max: 10_000 })).map(([i, id]): Mutation => ({
      kind: "unknown id",
      text: withLine(i, { ...lines[i], id }),
      where: at(i),
      pointer: "/id",
    })),
    fc.tuple(n(), n()).map(([i, j]): Mutation => {
      const copy = [...lines];
      const later = Math.max(i, j) + 1;
      copy.splice(later, 0, lines[Math.min(i, j)]);
      return { kind: "duplicate", text: jsonLines(copy), where: at(later), pointer: "/id" };
    }),
    fc.tuple(n(), fc.constantFrom("[1,2]", "42", '"x"', "null", "true")).map(([i, value]): Mutation => ({
      kind: "not an object",
      text: jsonLines(lines)
        .split("\n")
        .map((line, k) => (k === i ? value : line))
        .join("\n"),
      where: at(i),
      pointer: "/",
    })),
    fc.constantFrom("", "\n\n", "  \n").map((text): Mutation => ({ kind: "empty", text, where: (path) => path })),
  );
}

describe("validate: bad input is exit 2 with one line naming file and JSON path", () => {
  it("accepts the valid file it mutates", async () => {
    const result = await run(["--golden", GOLDEN, "--outputs", file(jsonLines(lines))]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.reportWritten).toBe(true);
  });

  it("property: generated malformed outputs files", async () => {
    await fc.assert(
      fc.asyncProperty(mutations(), async (mutation) => {
        const path = file(mutation.text);
        const result = await run(["--golden", GOLDEN, "--outputs", path]);
        expectBadInput(result, mutation.where(path), mutation.pointer);
      }),
      { numRuns: 60 },
    );
  });

  it("a line over the limit is refused without reading it whole", async () => {
    const path = file(`${JSON.stringify(lines[0])}\n${JSON.stringify({ ...lines[1], tokens: Array(5000).fill(7) })}\n`);
    await expect(
      validate({ goldenPath: GOLDEN, outputsPath: path, profile: PROFILES.strict, maxLineBytes: 4096 }),
    ).rejects.toThrow(new RegExp(`^${path}:2: line is longer than 4096 bytes`));
  });

  it("a document over the size limit is refused before reading", () => {
    expect(() => readDocument(GOLDEN, 100)).toThrow(InputError);
    expect(() => readDocument(GOLDEN, 100)).toThrow(/larger than the 100-byte limit/);
  });

  it("missing files and flags", async () => {
    expectBadInput(await run(["--golden", GOLDEN, "--outputs", join(dir, "absent.jsonl")]), join(dir, "absent.jsonl"));
    expectBadInput(
      await run(["--golden", join(dir, "absent.json"), "--outputs", file(jsonLines(lines))]),
      join(dir, "absent.json"),
    );
    const noGolden = await capture(() => validateCommand(["--outputs", "x.jsonl"]));
    expect(noGolden.code).toBe(2);
    expect(noGolden.stderr).toBe("specconf validate: missing --golden FILE\n");
  });

  it("bad golden files: format version, truncation, schema, consistency, digest", async () => {
    const golden = JSON.parse(readFileSync(GOLDEN, "utf8"));
    const outputs = file(jsonLines(lines));
    const variant = (value: unknown, text?: string) => file(text ?? JSON.stringify(value), "golden.json");
    let path = variant({ ...golden, formatVersion: 2 });
    expectBadInput(await run(["--golden", path, "--outputs", outputs]), path, "/formatVersion");
    path = variant(undefined, readFileSync(GOLDEN, "utf8").slice(0, 1000));
    expectBadInput(await run(["--golden", path, "--outputs", outputs]), path);
    expect(readFileSync(path, "utf8")).toHaveLength(1000);
    path = variant({ ...golden, epsilon: { ...golden.epsilon, target: -1 } });
    expectBadInput(await run(["--golden", path, "--outputs", outputs]), path, "/epsilon/target");
    const shortMargins = structuredClone(golden);
    shortMargins.cases[0].expected.requests[1].margins.pop();
    path = variant(shortMargins);
    expectBadInput(await run(["--golden", path, "--outputs", outputs]), path, "/cases/0/expected/requests/1/margins");
    path = variant({
      ...golden,
      models: { ...golden.models, target: { ...golden.models.target, digest: "0".repeat(64) } },
    });
    const digest = await run(["--golden", path, "--outputs", outputs]);
    expectBadInput(digest, path, "/models/target/digest");
    expect(digest.stderr).toContain("golden update");
    const otherSpec = structuredClone(golden);
    otherSpec.models.target.spec.seed = 2;
    for (const goldenCase of otherSpec.cases) goldenCase.case.model.spec.seed = 2;
    path = variant(otherSpec);
    expectBadInput(await run(["--golden", path, "--outputs", outputs]), path, "/models/target/digest");
  });

  it("bad traces: format version, digest, unknown case, wrong prompt", async () => {
    const outputs = file(jsonLines(lines));
    const traceFile = (value: unknown) => file(JSON.stringify(value), "trace.json");
    let path = traceFile({ ...trace, formatVersion: 9 });
    expectBadInput(await run(["--golden", GOLDEN, "--outputs", outputs, "--trace", path]), path, "/formatVersion");
    path = traceFile({ ...trace, models: { target: "a".repeat(64) } });
    expectBadInput(await run(["--golden", GOLDEN, "--outputs", outputs, "--trace", path]), path, "/models/target");
    path = traceFile(trace);
    const unknown = await run(["--golden", GOLDEN, "--outputs", outputs, "--trace", `nope=${path}`]);
    expectBadInput(unknown, path);
    const requests = structuredClone((trace as { requests: { prompt: number[] }[] }).requests);
    requests[1].prompt[3] += 1;
    path = traceFile({ ...trace, requests });
    expectBadInput(await run(["--golden", GOLDEN, "--outputs", outputs, "--trace", path]), path, "/requests");
    const ok = await run(["--golden", GOLDEN, "--outputs", outputs, "--trace", traceFile(trace)]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("--epsilon and --profile are checked", async () => {
    const outputs = file(jsonLines(lines));
    const bad = await capture(() => validateCommand(["--golden", GOLDEN, "--outputs", outputs, "--epsilon", "0"]));
    expect(bad).toMatchObject({ code: 2, stderr: "specconf validate: --epsilon must be a number > 0, got '0'\n" });
    const profile = await capture(() =>
      validateCommand(["--golden", GOLDEN, "--outputs", outputs, "--profile", "tgi"]),
    );
    expect(profile.code).toBe(2);
    expect(profile.stderr).toMatch(/--profile must be one of strict, sglang, sglang-v1/);
  });
});
