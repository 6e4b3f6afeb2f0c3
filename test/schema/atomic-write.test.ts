// Atomic writes: a set of files is written all or none (a failing replacement restores the files already
// replaced and removes new ones), no temp or backup file is ever left, an exclusive write never replaces
// a file, and an I/O error at write time (a full disk) is an OutputPathError naming the flag, not a crash.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";

// Fails the next write with ENOSPC when armed (the writer's only use of writeSync is the temp file's bytes).
const full = { armed: false };
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    writeSync: (...args: Parameters<typeof fs.writeSync>) => {
      if (full.armed) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      return fs.writeSync(...args);
    },
  };
});

const { writeFilesAtomic, writeTextAtomic } = await import("../../src/schema/atomic-write.ts");
const { writeOutputFile } = await import("../../src/cli/output-paths.ts");
const { OutputPathError, BadInputError } = await import("../../src/errors/bad-input.ts");

const root = mkdtempSync(join(tmpdir(), "specconf-atomic-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dir: string;
let n = 0;
beforeEach(() => {
  full.armed = false;
  dir = join(root, String(n++));
  mkdirSync(dir);
});

describe("writeFilesAtomic", () => {
  it("writes every file of a set, leaving nothing else", () => {
    writeFileSync(join(dir, "a.json"), "old a");
    writeFilesAtomic([
      { path: join(dir, "a.json"), text: "new a" },
      { path: join(dir, "b.json"), text: "new b" },
    ]);
    expect(readdirSync(dir).sort()).toEqual(["a.json", "b.json"]);
    expect(readFileSync(join(dir, "a.json"), "utf8")).toBe("new a");
  });

  it("a replacement that fails leaves every file as it was and no temp or backup file", () => {
    writeFileSync(join(dir, "a.json"), "old a");
    writeFileSync(join(dir, "b.json"), "old b");
    mkdirSync(join(dir, "c.json"));
    writeFileSync(join(dir, "c.json", "inside"), "x");
    expect(() =>
      writeFilesAtomic([
        { path: join(dir, "a.json"), text: "new a" },
        { path: join(dir, "new.json"), text: "new" },
        { path: join(dir, "b.json"), text: "new b" },
        { path: join(dir, "c.json"), text: "cannot replace a folder" },
      ]),
    ).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["a.json", "b.json", "c.json"]);
    expect(readFileSync(join(dir, "a.json"), "utf8")).toBe("old a");
    expect(readFileSync(join(dir, "b.json"), "utf8")).toBe("old b");
  });

  it("a temp file that cannot be written (a full disk) changes nothing", () => {
    writeFileSync(join(dir, "a.json"), "old a");
    full.armed = true;
    expect(() => writeTextAtomic(join(dir, "a.json"), "new a")).toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual(["a.json"]);
    expect(readFileSync(join(dir, "a.json"), "utf8")).toBe("old a");
  });

  it("an exclusive write never replaces a file", () => {
    writeFileSync(join(dir, "b.json"), "old b");
    expect(() =>
      writeFilesAtomic(
        [
          { path: join(dir, "a.json"), text: "new a" },
          { path: join(dir, "b.json"), text: "new b" },
        ],
        { exclusive: true },
      ),
    ).toThrow(expect.objectContaining({ code: "EEXIST" }));
    expect(readdirSync(dir)).toEqual(["b.json"]);
    expect(readFileSync(join(dir, "b.json"), "utf8")).toBe("old b");
  });
});

describe("writeOutputFile", () => {
  it("a full disk is bad input naming the flag and the file, and the old file stays", () => {
    const path = join(dir, "trace.json");
    writeFileSync(path, "old");
    full.armed = true;
    let error: unknown;
    try {
      writeOutputFile("--trace", path, "new");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OutputPathError);
    expect(error).toBeInstanceOf(BadInputError);
    expect((error as Error).message).toBe(`--trace ${path}: cannot be written: no space left on the device`);
    expect(readdirSync(dir)).toEqual(["trace.json"]);
    expect(readFileSync(path, "utf8")).toBe("old");
  });
});
