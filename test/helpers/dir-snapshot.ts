// A folder's contents as a map (relative path -> kind, size and content hash), to prove that a command
// wrote nothing: compare the snapshots taken before and after. A missing folder is an empty map.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export function snapshotDir(dir: string): Map<string, string> {
  const entries = new Map<string, string>();
  const walk = (path: string, relative: string): void => {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      if (relative !== "") entries.set(relative, `dir:${stat.mode & 0o777}`);
      let names: string[] = [];
      try {
        names = readdirSync(path);
      } catch {
        entries.set(relative, "dir:unreadable");
      }
      for (const name of names.sort()) walk(join(path, name), relative === "" ? name : `${relative}/${name}`);
    } else if (stat.isFile()) {
      let digest = "unreadable";
      try {
        digest = createHash("sha256").update(readFileSync(path)).digest("hex").slice(0, 16);
      } catch {
        // a file we may not read still counts by size
      }
      entries.set(relative, `file:${stat.size}:${digest}`);
    } else entries.set(relative, `other:${stat.mode}`);
  };
  walk(dir, "");
  return entries;
}

/** The paths whose entry differs between two snapshots (added, removed or changed). */
export function snapshotChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((key) => before.get(key) !== after.get(key)).sort();
}
