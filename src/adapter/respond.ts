// The protocol handling every engine behind the external-engine protocol shares (protocol.ts, version 2), so
// the reference server (server.ts), llama.cpp through node-llama-cpp (llama-cpp/server.ts) and llama-server
// (llama-server/serve.ts) answer the same line the same way: JSON Lines read one at a time and answered in
// order; a line that is not JSON answered { requestId: 0, error }; a hello told apart from a request; a
// request validated against the schema (the first issue with its JSON path), its requestId echoed even when
// it is invalid; a case outside an engine's capabilities answered { error, unsupported: true } before anything
// runs; a case that throws answered with the error's name and message. What differs per engine (its hello,
// its capability check, how it runs a case) is passed in.
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Case } from "../case/case.ts";
import { validateAgainst } from "../schema/validator.ts";
import {
  AdapterRequestSchema,
  HelloRequestSchema,
  type AdapterRequest,
  type AdapterResponse,
  type HelloResponse,
} from "./protocol.ts";

/** The request's own requestId when it has an integer one (also on an invalid request), else 0. */
export function requestIdOf(value: unknown): number {
  const id = typeof value === "object" && value !== null ? (value as { requestId?: unknown }).requestId : undefined;
  return Number.isInteger(id) ? (id as number) : 0;
}

export function isHello(value: unknown): boolean {
  return typeof value === "object" && value !== null && "hello" in value;
}

/** The first schema issue of a hello as "PATH MESSAGE", or undefined when it is valid. */
export function helloIssue(value: unknown): string | undefined {
  const hello = validateAgainst(HelloRequestSchema, value, "hello");
  return hello.ok ? undefined : `${hello.errors[0].path || "/"} ${hello.errors[0].message}`;
}

/** The request, or the error response naming the first schema issue. */
export function parseRequest(value: unknown): { requestId: number; request: AdapterRequest } | AdapterResponse {
  const requestId = requestIdOf(value);
  const checked = validateAgainst<AdapterRequest>(AdapterRequestSchema, value, "adapter request");
  if (!checked.ok)
    return { requestId, error: `invalid request: ${checked.errors[0].path || "/"} ${checked.errors[0].message}` };
  return { requestId, request: checked.value };
}

/** A run's answer: outputs per request, and the trace only when the request asked for it. */
export type CaseAnswer = Omit<Extract<AdapterResponse, { outputs: unknown }>, "requestId">;

/** What one engine does with a valid request: refuse its case, or run it. */
export interface CaseEngine {
  /** Why the engine cannot run the case as specified (with the JSON path), or undefined when it can. */
  unsupportedReason(testCase: Case): string | undefined;
  /** Outputs (and the trace when asked); throws when the case fails (answered as an error). */
  run(request: AdapterRequest, requestId: number): Promise<CaseAnswer>;
}

export async function respondToCase(value: unknown, engine: CaseEngine): Promise<AdapterResponse> {
  const parsed = parseRequest(value);
  if (!("request" in parsed)) return parsed;
  const { requestId, request } = parsed;
  const reason = engine.unsupportedReason(request.case);
  if (reason) return { requestId, error: reason, unsupported: true };
  try {
    return { requestId, ...(await engine.run(request, requestId)) };
  } catch (error) {
    return { requestId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

function writeLine(output: Writable, value: unknown): Promise<void> {
  return new Promise((resolve, reject) =>
    output.write(`${JSON.stringify(value)}\n`, (error) => (error ? reject(error) : resolve())),
  );
}

export interface LineHandlers {
  /** The answer to one parsed line (a hello or a request). */
  answer(value: unknown): Promise<AdapterResponse | HelloResponse>;
  /** Told about a line that is not JSON (it is answered with an error either way). */
  notJson?(message: string): void;
}

/** Serves until `input` ends: one answer line per non-empty input line, in order, one at a time. */
export async function serveLines(input: Readable, output: Writable, handlers: LineHandlers): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      handlers.notJson?.((error as Error).message);
      await writeLine(output, { requestId: 0, error: "request line is not JSON" });
      continue;
    }
    await writeLine(output, await handlers.answer(value));
  }
}
