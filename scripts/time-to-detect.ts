// Time to detect as a user meets it (issue 26): for each named fault, the wall seconds from starting
// `specconf check --fault F` (default flags otherwise: every law, 30 runs each, the machine's cores as
// workers) to the first shrunk failure it prints, and which law's property found it. The check is stopped
// there. Prints a table and the median and worst; --json writes the rows. On a many-core box, --jobs J
// --cpus-per C measures J faults at once, each check pinned (taskset) to its own C cores, so that it
// sees a C-core machine (its default workers follow the affinity): the 2-core CI machine's figure, J at a time.
//
//   npx tsx scripts/time-to-detect.ts [--fault F]... [--seed 1] [--workers N] [--limit 120] [--json FILE]
//     [--jobs J --cpus-per C [--first-cpu K]]
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { FAULT_NAMES } from "../src/case/faults.ts";
import { median, table } from "./bench-util.ts";

const { values } = parseArgs({
  options: {
    fault: { type: "string", multiple: true, default: [] },
    seed: { type: "string", default: "1" },
    workers: { type: "string" },
    limit: { type: "string", default: "120" },
    json: { type: "string" },
    jobs: { type: "string", default: "1" },
    "cpus-per": { type: "string" },
    "first-cpu": { type: "string", default: "0" },
  },
});
const jobs = Number(values.jobs);
const cpusPer = values["cpus-per"] === undefined ? undefined : Number(values["cpus-per"]);
const firstCpu = Number(values["first-cpu"]);

interface Detection {
  fault: string;
  seconds: number | null;
  property: string | null;
}

/** Runs `check --fault F` until it prints a failure paragraph ("... FAILED on a case of property 'X'"), or the limit. */
function detect(fault: string, slot: number): Promise<Detection> {
  const args = ["bin/specconf.js", "check", "--fault", fault, "--seed", values.seed!, "--no-write"];
  if (values.workers) args.push("--workers", values.workers);
  const [command, commandArgs] =
    cpusPer === undefined
      ? [process.execPath, args]
      : [
          "taskset",
          ["-c", `${firstCpu + slot * cpusPer}-${firstCpu + slot * cpusPer + cpusPer - 1}`, process.execPath, ...args],
        ];
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    let text = "";
    let done = false;
    const finish = (result: Detection) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
      resolve(result);
    };
    const timer = setTimeout(() => finish({ fault, seconds: null, property: null }), Number(values.limit) * 1000);
    child.stderr!.on("data", (chunk) => {
      text += chunk;
      const match = /FAILED on a case of property '([^']+)'/.exec(text);
      if (match) finish({ fault, seconds: (performance.now() - start) / 1000, property: match[1] });
    });
    child.on("exit", () => finish({ fault, seconds: null, property: null }));
  });
}

const faults = (values.fault as string[]).length > 0 ? (values.fault as string[]) : [...FAULT_NAMES];
const rows: Detection[] = [];
const queue = [...faults];
// J slots, each taking the next fault when its check ends; rows in the faults' order at the end.
await Promise.all(
  Array.from({ length: Math.min(jobs, faults.length) }, async (_, slot) => {
    for (let fault = queue.shift(); fault !== undefined; fault = queue.shift()) {
      const row = await detect(fault, slot);
      rows.push(row);
      console.error(
        `${fault}: ${row.seconds === null ? "not detected" : `${row.seconds.toFixed(1)}s (${row.property})`}`,
      );
      if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
    }
  }),
);
rows.sort((a, b) => faults.indexOf(a.fault) - faults.indexOf(b.fault));
const found = rows.filter((row) => row.seconds !== null).map((row) => row.seconds!);
console.log(
  table(
    ["fault", "seconds to the printed shrunk failure", "property"],
    rows.map((row) => [
      row.fault,
      row.seconds === null ? `> ${values.limit}` : row.seconds.toFixed(1),
      row.property ?? "-",
    ]),
  ),
);
console.log(
  `${found.length}/${rows.length} detected; median ${found.length ? median(found).toFixed(1) : "-"}s, worst ${found.length === rows.length && found.length ? Math.max(...found).toFixed(1) : `> ${values.limit}`}s`,
);
