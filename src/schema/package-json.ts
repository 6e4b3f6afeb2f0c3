// specconf's own package.json (its version, its peer dependencies' pins), found from this file's place: two
// folders up from src/schema/ in a checkout and from dist/schema/ in the installed package alike. Read once,
// on first use: `specconf --version`, the protocol hello, the fix printed for a missing optional peer.
import { readFileSync } from "node:fs";

interface PackageJson {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
}

let cached: PackageJson | undefined;

export function packageJson(): PackageJson {
  cached ??= JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as PackageJson;
  return cached;
}
