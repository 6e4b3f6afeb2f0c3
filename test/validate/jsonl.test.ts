// The streaming JSON Lines reader: line numbers, CRLF, blank lines, a missing final newline, chunk
// boundaries inside lines and multi-byte characters, and the per-line limit.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJsonLines } from "../../src/validate/jsonl.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-jsonl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function read(text: string, maxLineBytes?: number) {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, text);
  const out = [];
  for await (const line of readJsonLines(path, { maxLineBytes })) out.push({ line: line.line, value: line.value });
  return out;
}

describe("readJsonLines", () => {
  it("numbers lines as in the file, skipping blank ones, with CRLF and no final newline", async () => {
    expect(await read('{"a":1}\r\n\r\n  \n{"b":"é"}\n[3]')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: { b: "é" } },
      { line: 5, value: [3] },
    ]);
  });

  it("reassembles lines across read chunks (64 KiB) and multi-byte characters", async () => {
    const long = { text: "ü".repeat(70_000) };
    expect(await read(`${JSON.stringify(long)}\n{"x":2}\n`)).toEqual([
      { line: 1, value: long },
      { line: 2, value: { x: 2 } },
    ]);
  });

  it("names the line of a syntax error, and says a last line without newline may be truncated", async () => {
    await expect(read('{"a":1}\n{"a":\n')).rejects.toThrow(/:2: invalid JSON/);
    await expect(read('{"a":1}\n{"a":1')).rejects.toThrow(/:2: invalid JSON .*is the file truncated\?/);
  });

  it("refuses a line over the limit", async () => {
    await expect(read(`{"a":1}\n${JSON.stringify({ b: "x".repeat(200) })}\n`, 100)).rejects.toThrow(
      /:2: line is longer than 100 bytes/,
    );
  });
});
