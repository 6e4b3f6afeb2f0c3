// runSuite over worker processes (check --workers N): each property's runs split into chunks that start where
// one sequential fc.check would be at that run (law-property.ts startRun), handed to idle workers. The
// result is the same for every N: per property, the chunks count in order up to and including the first
// that fails (later ones are dropped, or never started), that chunk's shrunk case is the property's, and the
// parent writes its failure records, so the verdicts, shrunk cases, files and replay commands equal one
// in-process run's.
import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chunkRecord, countedChunks, relaxationsOf, suiteFromChunks, type ChunkRecord } from "./chunks.ts";
import { describeFailure, notRunLine, writePropertyFailure, type LawProperty } from "./law-property.ts";
import { propertyFor } from "./law-properties.ts";
import { emptySuiteResult, type SuiteOptions, type SuiteResult } from "./suite.ts";
import type { ParentMessage, SuiteJob, SuiteTask, TaskResult, WorkerMessage } from "./suite-job.ts";

// The worker runs what the parent runs: from a checkout the TypeScript sources, through tsx's loader; from the
// installed package (dist/, plain node, no tsx installed) the built JavaScript.
const FROM_SOURCE = import.meta.url.endsWith(".ts");
const WORKER = join(dirname(fileURLToPath(import.meta.url)), FROM_SOURCE ? "suite-worker.ts" : "suite-worker.js");
/** The worker's node flags: tsx's loader when running from source, none for the built package. */
function workerExecArgv(): string[] {
  if (!FROM_SOURCE) return [];
  const tsx = dirname(createRequire(import.meta.url).resolve("tsx/package.json"));
  return ["--import", pathToFileURL(join(tsx, "dist/loader.mjs")).href];
}

export interface WorkerSuiteOptions extends SuiteOptions {
  workers: number;
  /** Only this shard's chunks (1-based index of count): chunk j of property p is shard (p + j) mod count. */
  shard?: { index: number; count: number };
  job: SuiteJob;
  /** Engine restarts in the workers (the parent's source sees none of them). */
  onRestarts?: (count: number) => void;
}

/**
 * Chunks per property: enough for every worker to stay busy to the end (a shard's count of them per shard),
 * never below one run each. How the runs split changes nothing in the result (chunks.ts), only the balance:
 * properties differ 20-fold in cost per run (a sampling-distribution case is 32-48 replicas), so about 16
 * chunks per worker keep the slowest chunk short; 4 per worker left 16 workers idle behind a few long chunks
 * (4.7x over one worker on 16 cores, --runs 200).
 */
const CHUNKS_PER_WORKER = 16;

function chunksOf(
  properties: readonly LawProperty[],
  runs: number,
  workers: number,
  shard?: { index: number; count: number },
): SuiteTask[] {
  const perShard = Math.ceil((CHUNKS_PER_WORKER * workers) / Math.max(1, properties.length));
  const perProperty = Math.max(1, Math.min(runs, (shard?.count ?? 1) * perShard));
  const size = Math.ceil(runs / perProperty);
  const tasks: SuiteTask[] = [];
  properties.forEach((property, p) => {
    for (let start = 0, j = 0; start < runs; start += size, j++)
      if (!shard || (p + j) % shard.count === shard.index - 1)
        tasks.push({ id: tasks.length, law: property.law, start, count: Math.min(size, runs - start) });
  });
  return tasks;
}

export async function runSuiteOnWorkers(
  options: WorkerSuiteOptions,
): Promise<{ suite: SuiteResult; chunks: ChunkRecord[] }> {
  const result = emptySuiteResult();
  const properties = options.properties.filter((property) => {
    const narrowed = options.narrow?.({ ...property.space, faults: options.faults ?? [] });
    if (typeof narrowed !== "string") return true;
    result.notExercised.push({ law: property.law, reason: narrowed });
    options.log?.(notRunLine(property.law, narrowed));
    for (let run = 0; run < options.runs; run++) options.onRun?.();
    return false;
  });
  const tasks = chunksOf(properties, options.runs, options.workers, options.shard);
  const results = new Map<number, TaskResult>();
  /** Per property, the first chunk (by start) that failed: later chunks are not started. */
  const failedAt = new Map<string, number>();
  const pending = [...tasks];
  // A property's failure is printed as soon as it is final: its first failed chunk, every earlier one passed.
  const announced = new Set<string>();
  const announce = (law: string) => {
    const start = failedAt.get(law);
    if (start === undefined || announced.has(law)) return;
    const chunks = tasks.filter((task) => task.law === law && task.start <= start);
    if (!chunks.every((task) => results.has(task.id))) return;
    const decisive = results.get(chunks.find((task) => task.start === start)!.id)!;
    if (
      chunks.some(
        (task) => task.start < start && (results.get(task.id)!.run.failure || results.get(task.id)!.run.error),
      )
    )
      return;
    announced.add(law);
    if (decisive.run.failure) options.log?.(describeFailure({ ...decisive.run, runs: start + decisive.run.runs }));
  };
  const children: ChildProcess[] = [];
  await new Promise<void>((resolve, reject) => {
    let running = 0;
    const next = (child: ChildProcess) => {
      let task = pending.shift();
      while (task && (failedAt.get(task.law) ?? Infinity) < task.start) task = pending.shift();
      if (!task) {
        child.send({ kind: "stop" } satisfies ParentMessage);
        if (--running === 0) resolve();
        return;
      }
      child.send({ kind: "task", task } satisfies ParentMessage);
    };
    const count = Math.min(options.workers, Math.max(1, tasks.length));
    for (let worker = 0; worker < count; worker++) {
      const child = fork(WORKER, [], {
        execArgv: workerExecArgv(),
        stdio: ["ignore", "ignore", "inherit", "ipc"],
        serialization: "advanced",
      });
      children.push(child);
      running += 1;
      child.on("message", (message: WorkerMessage) => {
        if (message.kind === "run") options.onRun?.();
        else if (message.kind === "shrink") options.onShrink?.(message.law, message.attempt);
        else if (message.kind === "log") options.log?.(message.line);
        else if (message.kind === "restarts") options.onRestarts?.(message.count);
        else if (message.kind === "error") reject(new Error(`check worker ${worker}: ${message.message}`));
        else {
          const task = tasks[message.result.id];
          results.set(task.id, message.result);
          if (message.result.run.failure || message.result.run.error)
            failedAt.set(task.law, Math.min(failedAt.get(task.law) ?? Infinity, task.start));
          announce(task.law);
          next(child);
        }
      });
      child.on("exit", (code) => {
        if (code !== 0 && code !== null) reject(new Error(`check worker ${worker} exited with ${code}`));
      });
      child.send({ kind: "init", job: options.job, worker } satisfies ParentMessage);
      next(child);
    }
    if (count === 0) resolve();
  }).finally(() => {
    for (const child of children) if (child.connected) child.kill();
  });
  // Each property's first failed chunk writes its failure records (as runLawProperty would have).
  // Tasks are in property order, so a law an earlier property recorded gets no second record (as in runSuite).
  const records: ChunkRecord[] = [];
  const recorded = new Set<string>();
  for (const task of tasks) {
    const done = results.get(task.id);
    if (!done) continue;
    if (done.run.failure && options.failureDir !== false && failedAt.get(task.law) === task.start) {
      await writePropertyFailure(propertyFor(task.law)!, done.run, {
        numRuns: task.count,
        startRun: task.start,
        seed: options.seed,
        laws: options.laws,
        pinned: options.pinned,
        twins: options.twins,
        engine: options.engine,
        failureDir: options.failureDir,
        recorded: new Set(recorded),
      });
      for (const law of done.run.failure.replays?.keys() ?? []) recorded.add(law);
    }
    records.push(chunkRecord(task.start, task.count, done.run, done));
  }
  const order = properties.map((property) => property.law);
  const counted = countedChunks(order, records);
  const suite = suiteFromChunks(order, counted);
  suite.notExercised.push(...result.notExercised);
  options.views?.log.absorb(relaxationsOf(counted));
  return { suite, chunks: counted };
}
