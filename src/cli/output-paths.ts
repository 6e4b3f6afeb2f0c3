// Output paths, checked before any work starts and written through one function. A file output (--trace,
// --junit, --report, --outputs) must be a regular file or not exist yet, in an existing writable folder;
// a folder output (--failures, --out, --trace-dir, --dir) must be a writable folder or not exist yet under
// a writable folder (it is created). An output may not be one of the command's inputs. Writability is
// probed by creating and removing a file, which is what counts (root ignores permission bits; /sys and
// read-only mounts refuse anyway). A write that fails anyway (a full disk) is an OutputPathError naming the
// flag, and the atomic writer leaves the old file in place.
import { closeSync, lstatSync, openSync, realpathSync, rmSync, statfsSync, type Stats } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { OutputPathError } from "../errors/bad-input.ts";
import { writeFilesAtomic, type AtomicFile, type AtomicOptions } from "../schema/atomic-write.ts";

export interface OutputPath {
  flag: string;
  path: string;
  kind: "file" | "folder";
}

export interface InputPath {
  flag: string;
  path: string;
}

/** The path's own stat; undefined when it does not exist (ENOTDIR: a part of it is a file, so neither does it). */
function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "read-only file system";
    case "ENOSPC":
    case "EDQUOT":
      return "no space left on the device";
    case "ENOENT":
      return "cannot be created there";
    case "ENOTDIR":
      return "a part of the path is a file, not a folder";
    case "EISDIR":
      return "is a folder";
    default:
      return (err as Error).message.split("\n")[0];
  }
}

/** Creates and removes a file in `folder`: the only test of writability that root and read-only mounts obey. */
function probeWritable(output: OutputPath, folder: string): void {
  const probe = join(folder, `.specconf-probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    closeSync(openSync(probe, "wx"));
  } catch (err) {
    throw new OutputPathError(output.flag, output.path, `cannot write in the folder ${folder}: ${reason(err)}`, {
      cause: err,
    });
  } finally {
    rmSync(probe, { force: true });
  }
  try {
    const fs = statfsSync(folder);
    if (fs.blocks > 0 && fs.bavail === 0)
      throw new OutputPathError(output.flag, output.path, `no space left on the device holding ${folder}`);
  } catch (err) {
    if (err instanceof OutputPathError) throw err;
    // statfs is not available everywhere: the write reports a full disk itself.
  }
}

function checkFile(output: OutputPath): void {
  if (output.path === "" || /[/\\]$/.test(output.path))
    throw new OutputPathError(output.flag, output.path, "must name a file, not a folder");
  const stat = statOf(output.path);
  if (stat?.isDirectory()) throw new OutputPathError(output.flag, output.path, "is a folder, not a file");
  if (stat && !stat.isFile())
    throw new OutputPathError(output.flag, output.path, "is not a regular file (a device, a socket or a link)");
  const parent = dirname(output.path);
  const parentStat = statOf(parent);
  if (!parentStat) throw new OutputPathError(output.flag, output.path, `its folder ${parent} does not exist`);
  if (!parentStat.isDirectory()) throw new OutputPathError(output.flag, output.path, `${parent} is not a folder`);
  probeWritable(output, parent);
}

function checkFolder(output: OutputPath): void {
  if (output.path === "") throw new OutputPathError(output.flag, output.path, "must name a folder");
  let existing = output.path;
  let stat = statOf(existing);
  while (!stat) {
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
    stat = statOf(existing);
  }
  if (!stat) throw new OutputPathError(output.flag, output.path, "no part of the path exists");
  if (!stat.isDirectory()) {
    const what = existing === output.path ? "is a file, not a folder" : `${existing} is a file, not a folder`;
    throw new OutputPathError(output.flag, output.path, what);
  }
  probeWritable(output, existing);
}

function samePath(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}

/** Throws an OutputPathError for the first output that cannot be written, before any work starts. */
export function checkOutputPaths(outputs: readonly OutputPath[], inputs: readonly InputPath[] = []): void {
  for (const output of outputs) {
    if (output.kind === "file") checkFile(output);
    else checkFolder(output);
    const input = inputs.find((candidate) => samePath(candidate.path, output.path));
    if (input)
      throw new OutputPathError(output.flag, output.path, `is also the input ${input.flag}: refusing to overwrite it`);
  }
}

/**
 * Writes the files of one output flag atomically (all or nothing); an I/O error (a full disk, a folder
 * turned read-only since the check) is an OutputPathError naming the flag.
 */
export function writeOutputFiles(flag: string, files: readonly AtomicFile[], options: AtomicOptions = {}): void {
  try {
    writeFilesAtomic(files, options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== "string" || (options.exclusive && code === "EEXIST")) throw err;
    // The error names the path it hit: the target, or its temp or backup file (`.NAME.PID.RANDOM.tmp`).
    const path = (err as NodeJS.ErrnoException).path ?? "";
    const file = files.find(
      (candidate) => path === candidate.path || path.includes(`${basename(candidate.path)}.`),
    )?.path;
    throw new OutputPathError(flag, file ?? files[0]?.path ?? "", `cannot be written: ${reason(err)}`, { cause: err });
  }
}

export function writeOutputFile(flag: string, path: string, text: string | Uint8Array): void {
  writeOutputFiles(flag, [{ path, text }]);
}
