// Atomic writes: a temp file in the target's directory, fsync, rename over the target (and a best-effort
// fsync of the directory), so a reader sees the old file or the new one, never a part. A set of files
// (golden update, a failure record with its case and trace) is written all or nothing: every temp file
// first, then the renames in one synchronous block, undone if one fails. Everything here is synchronous
// on purpose: a signal handler (src/cli/signals.ts) runs only between two synchronous blocks, so an
// interrupt never leaves a temp file or half a set behind.
// Output is stable: 2-space indentation, key order as given, a trailing newline.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
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

export interface AtomicFile {
  path: string;
  text: string | Uint8Array;
}

export interface AtomicOptions {
  /** Never replace an existing file: the write fails with EEXIST instead (and writes nothing). */
  exclusive?: boolean;
}

/** Atomic text or bytes: a temp file in the target's directory, fsync, rename over the target. */
export function writeTextAtomic(path: string, text: string | Uint8Array, options: AtomicOptions = {}): void {
  writeFilesAtomic([{ path, text }], options);
}

/** The temp (or backup) name next to `path`: hidden, unique, recognisable (`.NAME.PID.RANDOM.tmp`). */
function sidePath(path: string, suffix: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.${suffix}`);
}

function writeTemp(path: string, text: string | Uint8Array): string {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = sidePath(path, "tmp");
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", 0o644);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    return tmp;
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
}

function fsyncDir(dir: string): void {
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

/**
 * Writes every file or none: temp files first (a failure removes them and changes nothing), then each
 * target is moved aside (a hard link kept as backup) and replaced; if a replacement fails, the targets
 * already replaced are restored from their backups, files that did not exist are removed, and the error
 * is rethrown. With `exclusive`, an existing target is an EEXIST error before anything is replaced.
 */
export function writeFilesAtomic(files: readonly AtomicFile[], options: AtomicOptions = {}): void {
  const paths = files.map((file) => file.path);
  if (new Set(paths).size !== paths.length) throw new Error(`writeFilesAtomic: a path is named twice`);
  const temps: string[] = [];
  try {
    for (const file of files) temps.push(writeTemp(file.path, file.text));
  } catch (err) {
    for (const tmp of temps) rmSync(tmp, { force: true });
    throw err;
  }
  // From here on everything is synchronous and undoable.
  const done: { path: string; backup: string | undefined }[] = [];
  try {
    files.forEach((file, i) => {
      if (options.exclusive) {
        linkSync(temps[i], file.path); // EEXIST when the target exists: never replaced
        rmSync(temps[i], { force: true });
        done.push({ path: file.path, backup: undefined });
        return;
      }
      let backup: string | undefined = sidePath(file.path, "bak");
      try {
        linkSync(file.path, backup);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        backup = undefined;
      }
      done.push({ path: file.path, backup });
      renameSync(temps[i], file.path);
    });
  } catch (err) {
    for (const { path, backup } of done.reverse()) {
      if (backup !== undefined) renameSync(backup, path);
      else rmSync(path, { force: true });
    }
    for (const tmp of temps) rmSync(tmp, { force: true });
    throw err;
  }
  for (const { backup } of done) if (backup !== undefined) rmSync(backup, { force: true });
  for (const dir of new Set(paths.map((path) => dirname(path)))) fsyncDir(dir);
}
