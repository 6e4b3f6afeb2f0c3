// A check --workers worker process: takes chunks of the suite's properties from the parent (suite-workers.ts),
// runs each with runLawProperty from its start in the seed's sequence, and sends back the run, its tally and
// its relaxations. It writes no failure file (the parent writes the one that decides a property) and prints
// nothing on stdout (the parent's report may be JSON).
import type { Case } from "../case/case.ts";
import type fc from "fast-check";
import { RelaxationLog, PROFILES } from "../profiles/profiles.ts";
import { RelaxedViews } from "../profiles/relaxed-view.ts";
import { ExternalSource } from "../sources/external.ts";
import type { RunSource } from "../check/source.ts";
import { narrowSpace } from "./arbitraries/capabilities.ts";
import { caseArbitrary } from "./arbitraries/case.ts";
import { oracleProperty, propertyFor } from "./law-properties.ts";
import { runLawProperty } from "./law-property.ts";
import { countRun } from "./suite.ts";
import { workerCommand, type ParentMessage, type SuiteJob, type SuiteTask, type WorkerMessage } from "./suite-job.ts";

const send = (message: WorkerMessage) => process.send!(message);

let job: SuiteJob | undefined;
let source: ExternalSource | undefined;
let reportedRestarts = 0;

async function runTask(task: SuiteTask): Promise<void> {
  const config = job!;
  const property = oracleProperty(propertyFor(task.law)!, config.eagle3Oracle);
  let arbitrary: fc.Arbitrary<Case> | undefined;
  if (config.engine) {
    const narrowed = narrowSpace({ ...property.space, faults: [...config.faults] }, config.engine.capabilities);
    if (typeof narrowed === "string") throw new Error(`property '${task.law}' is outside the engine: ${narrowed}`);
    arbitrary = caseArbitrary(narrowed);
  }
  const log = config.profile ? new RelaxationLog(PROFILES[config.profile]) : undefined;
  const tally = { runSeconds: 0, features: new Map<string, number>() };
  const run = await runLawProperty(property, {
    numRuns: task.count,
    startRun: task.start,
    seed: config.seed,
    faults: config.faults,
    ep: config.ep,
    laws: config.laws && new Set(config.laws),
    shrinkSeconds: config.shrinkSeconds,
    twins: config.twins,
    failureDir: false,
    source: source as RunSource | undefined,
    views: log && new RelaxedViews(log.profile, log),
    engine: config.engine && { command: config.engine.command, name: config.engine.name },
    pinned: config.pinned && new Set(config.pinned),
    arbitrary,
    onRun: (check) => {
      countRun(tally, check);
      send({ kind: "run" });
    },
    onShrink: (attempt) => send({ kind: "shrink", law: task.law, attempt }),
  });
  if (source && source.restarts > reportedRestarts) {
    send({ kind: "restarts", count: source.restarts - reportedRestarts });
    reportedRestarts = source.restarts;
  }
  const relaxations = (log?.entries() ?? []).map(({ id, applied, details }) => ({ id, applied, details }));
  send({ kind: "done", result: { id: task.id, run, ...tally, features: [...tally.features], relaxations } });
}

// One task at a time: the parent sends the next when this one is done.
let queue = Promise.resolve();
process.on("message", (message: ParentMessage) => {
  queue = queue.then(async () => {
    try {
      if (message.kind === "init") {
        job = message.job;
        if (job.engine)
          source = await ExternalSource.start(workerCommand(job.engine.command, message.worker), {
            timeoutMs: job.engine.timeoutMs,
            onRestart: (reason) =>
              send({ kind: "log", line: `  engine restarted after ${reason.split("\n")[0].slice(0, 160)}` }),
          });
      } else if (message.kind === "task") await runTask(message.task);
      else {
        await source?.close();
        process.disconnect();
      }
    } catch (error) {
      send({ kind: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  });
});
