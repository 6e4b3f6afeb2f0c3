// llama.cpp behind the external-engine protocol (src/adapter/protocol.ts, version 2): JSON Lines on stdin and
// stdout, one message at a time. A hello line (the first one, when specconf sends it) is answered with the
// engine's name, versions and capabilities; each request line runs its case (run-on-llama.ts) and is answered
// with outputs per request and, when asked, the trace (trace.ts). Cases outside the capabilities are answered
// { error, unsupported: true }; files that cannot be found or a round that cannot be attributed are plain
// errors. llama.cpp starts (binary check, ~seconds) while the first line is awaited. Returns when stdin ends.
import type { Readable, Writable } from "node:stream";
import type { HelloResponse } from "../protocol.ts";
import { helloIssue, isHello, respondToCase, serveLines, type CaseEngine } from "../respond.ts";
import { CAPABILITIES, ENGINE_NAME, unsupportedReason } from "./capabilities.ts";
import { modelPaths, type ModelDirOptions } from "./model-files.ts";
import { runOnLlama } from "./run-on-llama.ts";
import { LlamaRuntime } from "./runtime.ts";
import { llamaTrace } from "./trace.ts";

export interface LlamaServeOptions extends ModelDirOptions {
  threads: number;
  /** Write each request's rounds (drafts, validated count, produced tokens) to the log. */
  logRounds?: boolean;
  log: (message: string) => void;
}

/** The case engine the shared protocol handling (../respond.ts) drives: a case runs on llama.cpp's contexts. */
export function llamaCaseEngine(runtime: LlamaRuntime, options: LlamaServeOptions): CaseEngine {
  return {
    unsupportedReason,
    async run(request, requestId) {
      const paths = modelPaths(request, options);
      const runs = await runOnLlama(runtime, request.case, paths, {
        onRounds: options.logRounds
          ? (caseRequest, rounds) =>
              options.log(`request ${requestId} / ${caseRequest.id} rounds ${JSON.stringify(rounds)}\n`)
          : undefined,
      });
      const outputs = runs.map((run) => run.output);
      if (!request.wantTrace) return { outputs };
      const trace = llamaTrace(request.case, runs, {
        engineVersion: runtime.version(),
        threads: options.threads,
        targetDigest: request.models.target,
        draftDigest: request.models.draft,
      });
      return { outputs, trace };
    },
  };
}

export function helloResponse(runtime: LlamaRuntime): HelloResponse {
  return { hello: { name: ENGINE_NAME, version: runtime.version(), capabilities: CAPABILITIES } };
}

/** Serves until `input` ends, then disposes llama.cpp. */
export async function serveLlama(input: Readable, output: Writable, options: LlamaServeOptions): Promise<void> {
  const starting = LlamaRuntime.start({ threads: options.threads, log: options.log });
  starting.catch(() => undefined); // reported when the first line needs it
  let runtime: LlamaRuntime | undefined;
  try {
    await serveLines(input, output, {
      async answer(value) {
        runtime ??= await starting;
        if (!isHello(value)) return respondToCase(value, llamaCaseEngine(runtime, options));
        const issue = helloIssue(value);
        if (issue) options.log(`hello: ${issue} (answered anyway)\n`);
        return helloResponse(runtime);
      },
      notJson: (message) => options.log(`ignoring a line that is not JSON: ${message}\n`),
    });
  } finally {
    await (runtime ?? (await starting.catch(() => undefined)))?.dispose();
  }
}
