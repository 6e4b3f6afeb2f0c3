// A check's suite as data a worker process can take (check --workers): everything runSuite's options hold,
// with the run source, the profile's views and the capability narrowing named instead of built, so each
// worker builds its own (its own engine process: `{worker}` in the engine command is its index).
import type { Capabilities } from "../adapter/protocol.ts";
import type { FaultName } from "../case/faults.ts";
import type { ExecutionProvider } from "../runtime/ort.ts";
import type { PropertyRun } from "./law-property.ts";

export interface SuiteJob {
  runs: number;
  seed: number;
  faults: readonly FaultName[];
  ep?: ExecutionProvider;
  /** Laws checked and able to fail (default: every law). */
  laws?: readonly string[];
  shrinkSeconds?: number;
  twins?: "combined" | "separate";
  /** Where the parent writes failures (workers write none: only the failure that decides a property counts). */
  failureDir: string | false;
  /** With --engine: the command (with `{worker}`), its timeout, and what its handshake declared. */
  engine?: { command: string; timeoutMs: number; name: string; capabilities: Capabilities };
  /** With --engine --profile (not strict). */
  profile?: string;
  pinned?: readonly string[];
  /** check --eagle3-oracle: every property's space through withEagle3Oracle (arbitraries/eagle3-oracle.ts). */
  eagle3Oracle?: boolean;
}

/** One chunk of a property's runs: generated runs [start, start + count) of the seed's sequence. */
export interface SuiteTask {
  id: number;
  law: string;
  start: number;
  count: number;
}

/** What a worker sends back for a task. */
export interface TaskResult {
  id: number;
  run: PropertyRun;
  runSeconds: number;
  features: [string, number][];
  relaxations: { id: string; applied: number; details: string[] }[];
}

export type WorkerMessage =
  | { kind: "run" }
  | { kind: "shrink"; law: string; attempt: number }
  | { kind: "log"; line: string }
  | { kind: "done"; result: TaskResult }
  | { kind: "restarts"; count: number }
  | { kind: "error"; message: string };

export type ParentMessage =
  { kind: "init"; job: SuiteJob; worker: number } | { kind: "task"; task: SuiteTask } | { kind: "stop" };

/** The engine command of one worker: `{worker}` replaced by its index (e.g. CUDA_VISIBLE_DEVICES={worker}). */
export function workerCommand(command: string, worker: number): string {
  return command.replaceAll("{worker}", String(worker));
}
