// Atomic JSON writes: a temp file in the target's directory, fsync, rename over the target (and a
// best-effort fsync of the directory), so a reader sees the old file or the new one, never a part.
// Output is stable: 2-space indentation, key order as given, a trailing newline.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** The exact text writeJsonAtomic writes. Throws on values JSON would silently change (NaN, Infinity). */
export function stableJson(value: unknown): string {
  const text = JSON.stringify(
    value,
    (key, v: unknown) => {
      if (typeof v === "number" && !Number.isFinite(v)) {
        throw new TypeError(`cannot write ${v} as JSON${key === "" ? "" : ` (key '${key}')`}`);
      }
      return v;
    },
    2,
  );
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return `${text}\n`;
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeTextAtomic(path, stableJson(value));
}

/** Atomic text or bytes: a temp file in the target's directory, fsync, rename over the target. */
export function writeTextAtomic(path: string, text: string | Uint8Array): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", 0o644);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Directories cannot be fsynced on every platform; the rename itself already happened.
  }
}
