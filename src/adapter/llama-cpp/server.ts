// llama.cpp behind the external-engine protocol (src/adapter/protocol.ts, version 2): JSON Lines on stdin and
// stdout, one message at a time. A hello line (the first one, when specconf sends it) is answered with the
// engine's name, versions and capabilities; each request line runs its case (run-on-llama.ts) and is answered
// with outputs per request and, when asked, the trace (trace.ts). Cases outside the capabilities are answered
// { error, unsupported: true }; files that cannot be found or a round that cannot be attributed are plain
// errors. llama.cpp starts (binary check, ~seconds) while the first line is awaited. Returns when stdin ends.
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import {
  AdapterRequestSchema,
  HelloRequestSchema,
  type AdapterRequest,
  type AdapterResponse,
  type HelloResponse,
} from "../protocol.ts";
import { validateAgainst } from "../../schema/validator.ts";
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

function requestIdOf(value: unknown): number {
  const id = typeof value === "object" && value !== null ? (value as { requestId?: unknown }).requestId : undefined;
  return Number.isInteger(id) ? (id as number) : 0;
}

export async function respondToRequest(
  runtime: LlamaRuntime,
  value: unknown,
  options: LlamaServeOptions,
): Promise<AdapterResponse> {
  const requestId = requestIdOf(value);
  const checked = validateAgainst<AdapterRequest>(AdapterRequestSchema, value, "adapter request");
  if (!checked.ok)
    return { requestId, error: `invalid request: ${checked.errors[0].path || "/"} ${checked.errors[0].message}` };
  const request = checked.value;
  const reason = unsupportedReason(request.case);
  if (reason) return { requestId, error: reason, unsupported: true };
  try {
    const paths = modelPaths(request, options);
    const runs = await runOnLlama(runtime, request.case, paths, {
      onRounds: options.logRounds
        ? (caseRequest, rounds) =>
            options.log(`request ${requestId} / ${caseRequest.id} rounds ${JSON.stringify(rounds)}\n`)
        : undefined,
    });
    const outputs = runs.map((run) => run.output);
    if (!request.wantTrace) return { requestId, outputs };
    const trace = llamaTrace(request.case, runs, {
      engineVersion: runtime.version(),
      threads: options.threads,
      targetDigest: request.models.target,
      draftDigest: request.models.draft,
    });
    return { requestId, outputs, trace };
  } catch (error) {
    return { requestId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

export function helloResponse(runtime: LlamaRuntime): HelloResponse {
  return { hello: { name: ENGINE_NAME, version: runtime.version(), capabilities: CAPABILITIES } };
}

function write(output: Writable, value: unknown): Promise<void> {
  return new Promise((resolve, reject) =>
    output.write(`${JSON.stringify(value)}\n`, (error) => (error ? reject(error) : resolve())),
  );
}

/** Serves until `input` ends, then disposes llama.cpp. */
export async function serveLlama(input: Readable, output: Writable, options: LlamaServeOptions): Promise<void> {
  const starting = LlamaRuntime.start({ threads: options.threads, log: options.log });
  starting.catch(() => undefined); // reported when the first line needs it
  const lines = createInterface({ input, crlfDelay: Infinity });
  let runtime: LlamaRuntime | undefined;
  try {
    for await (const line of lines) {
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        options.log(`ignoring a line that is not JSON: ${(error as Error).message}\n`);
        await write(output, { requestId: 0, error: "request line is not JSON" });
        continue;
      }
      runtime ??= await starting;
      const isHello = typeof value === "object" && value !== null && "hello" in value;
      if (isHello) {
        const hello = validateAgainst(HelloRequestSchema, value, "hello");
        if (!hello.ok)
          options.log(`hello: ${hello.errors[0].path || "/"} ${hello.errors[0].message} (answered anyway)\n`);
        await write(output, helloResponse(runtime));
        continue;
      }
      await write(output, await respondToRequest(runtime, value, options));
    }
  } finally {
    await (runtime ?? (await starting.catch(() => undefined)))?.dispose();
  }
}
