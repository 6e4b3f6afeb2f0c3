// The laws that have a property suite, dealt round-robin into N groups, one group a line as repeated
// `--property NAME` flags (shell-quoted): run-on-gpu.sh check runs one process per EP, seed and group, so a
// GPU box's cores share the work, and every law still checks every run. Every property lands in one group.
// Usage: npx tsx scripts/gpu/law-groups.ts N
import { LAW_PROPERTIES } from "../../src/properties/law-properties.ts";

const groups = Math.max(1, Number(process.argv[2] ?? 1));
const lines: string[][] = Array.from({ length: groups }, () => []);
LAW_PROPERTIES.forEach((property, i) => lines[i % groups].push(`--property '${property.law.replace(/'/g, "'\\''")}'`));
for (const line of lines) if (line.length > 0) console.log(line.join(" "));
