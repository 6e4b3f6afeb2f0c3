// The findings' reproducers still match what specconf writes (issue 34): a llama-server command line printed in a
// finding names the GGUF files the current export writes for the finding's case (exported here into a temporary
// model cache, as the engine's cache and scripts/llama-server/case-files.ts write them), uses only flags the
// adapter's own command line uses (with their values) or the few a finding varies on purpose, and sends the
// case's prompts; every pinned finding exists with its case; every repository path a finding names exists.
// Running the server is the engine tests' and the reproducers' part (docs/findings/*.md say what was measured).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCaseFile } from "../../src/case/load.ts";
import { ModelCache } from "../../src/sources/model-cache.ts";
import { serverArgs } from "../../src/adapter/llama-server/launch.ts";
import { loadPins } from "../../src/failures/pins.ts";

const DIR = "docs/findings";
const findings = readdirSync(DIR).filter((name) => name.endsWith(".md"));
const cache = mkdtempSync(join(tmpdir(), "specconf-findings-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

/**
 * Flags a reproducer may set that the adapter's command line sets otherwise or not at all, each because the
 * finding is about it: slots and context (the finding's batch size), the server's address, the two switches
 * the EAGLE-3 findings compare with.
 */
const VARIED = new Set(["-np", "-c", "--host", "--port", "--no-spec-draft-backend-sampling", "--kv-unified"]);
/** Flags that take no value. */
const SWITCHES = new Set(["-v", "--no-warmup", "--no-webui", "--no-spec-draft-backend-sampling", "--kv-unified"]);

/** The llama-server command lines of a finding's sh blocks: backslash continuations joined, split into words. */
function serverCommands(markdown: string): string[][] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1].replace(/\\\n\s*/g, " "));
  return (
    blocks
      .flatMap((block) => block.split("\n"))
      .map((line) => line.replace(/^LLAMA_TRACE=1\s+/, "").replace(/\s2>.*$/, ""))
      .filter((line) => line.startsWith("llama-server "))
      .map((line) => line.trim().split(/\s+/).slice(1))
      // A placeholder file name (TARGET.gguf) says the files come from elsewhere (the finding says where).
      .filter((words) => /^[0-9a-f]{64}\./.test(words[words.indexOf("-m") + 1] ?? ""))
  );
}

/** Flag -> value (undefined for a switch), in order. */
function flagsOf(words: readonly string[]): Map<string, string | undefined> {
  const flags = new Map<string, string | undefined>();
  for (let index = 0; index < words.length; index++) {
    const word = words[index];
    expect(word.startsWith("-"), `'${word}' is not a flag`).toBe(true);
    if (SWITCHES.has(word)) flags.set(word, undefined);
    else flags.set(word, words[++index]);
  }
  return flags;
}

/** Every "prompt" of the JSON bodies a finding sends (a request with several prompts gives each). */
function promptsSent(markdown: string): number[][] {
  return [...markdown.matchAll(/"prompt": (\[\[[\d, [\]]*\]\]|\[[\d, ]*\])/g)].flatMap((match) => {
    const prompt = JSON.parse(match[1]) as number[] | number[][];
    return Array.isArray(prompt[0]) ? (prompt as number[][]) : [prompt as number[]];
  });
}

describe("findings' llama-server reproducers match the current export", () => {
  const withServer = findings.filter((name) => serverCommands(readFileSync(join(DIR, name), "utf8")).length > 0);

  it("some findings print a llama-server command line (the parser reads them)", () => {
    expect(withServer.length).toBeGreaterThanOrEqual(4);
  });

  for (const name of withServer) {
    it(name, () => {
      const markdown = readFileSync(join(DIR, name), "utf8");
      const casePath = join(DIR, name.replace(/\.md$/, ".case.json"));
      expect(existsSync(casePath), `${casePath} (the case the command line runs)`).toBe(true);
      const testCase = loadCaseFile(casePath);
      const gguf = new ModelCache(cache).files(testCase, ["gguf"]).gguf!;
      const adapter = flagsOf(serverArgs(testCase, { target: gguf.target, draft: gguf.draft }));
      for (const words of serverCommands(markdown)) {
        const flags = flagsOf(words);
        expect(flags.get("-m"), "-m: the target file the export writes").toBe(basename(gguf.target));
        // Without -md the finding runs the target alone (it says why); with it, the draft the export writes.
        if (flags.has("-md"))
          expect(flags.get("-md"), "-md: the draft file the export writes").toBe(gguf.draft && basename(gguf.draft));
        for (const [flag, value] of flags) {
          if (flag === "-m" || flag === "-md" || VARIED.has(flag)) continue;
          expect(adapter.has(flag), `${flag}: a flag the adapter's command line uses`).toBe(true);
          expect(value, `${flag}: the adapter's value for this case`).toBe(adapter.get(flag));
        }
      }
      const casePrompts = testCase.workload.requests.map((request) => JSON.stringify(request.prompt));
      const sent = promptsSent(markdown);
      expect(sent.length).toBeGreaterThan(0);
      for (const prompt of sent)
        expect(casePrompts, "a prompt the finding sends is one of its case's").toContain(JSON.stringify(prompt));
      expect(markdown).toContain(`scripts/llama-server/case-files.ts ${casePath}`);
    });
  }
});

describe("pinned findings", () => {
  for (const pins of readdirSync(DIR).filter((name) => name.endsWith(".pins.json"))) {
    it(pins, () => {
      const { laws } = loadPins(join(DIR, pins));
      expect(laws.size).toBeGreaterThan(0);
      for (const [law, file] of laws) {
        expect(existsSync(file), `${law}: ${file}`).toBe(true);
        expect(existsSync(file.replace(/\.md$/, ".case.json")), `${law}: the case of ${file}`).toBe(true);
      }
    });
  }
});

describe("every repository path a finding names exists", () => {
  for (const name of findings) {
    it(name, () => {
      const markdown = readFileSync(join(DIR, name), "utf8");
      const paths = [
        ...markdown.matchAll(
          /(?<![\w./-])((?:scripts|golden|examples|test|docs|python)\/[\w./-]+\.(?:ts|py|sh|json|onnx|patch|md))/g,
        ),
      ].map((match) => match[1]);
      for (const path of new Set(paths)) {
        const candidates = [path, join(DIR, path)];
        // An output a command writes (a failure file, the replay's model cache) is not a repository path.
        if (path.startsWith(".specconf") || path.includes("<")) continue;
        expect(
          candidates.some((candidate) => existsSync(candidate)),
          `${name} names ${path}`,
        ).toBe(true);
      }
    });
  }
});
