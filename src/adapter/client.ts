// The client side of the external-engine protocol (protocol.ts): starts the engine command in its own
// process group, writes one request line per case and reads one response line, with a per-request
// timeout. A crash, a timeout, a malformed response or an engine-reported error is an
// ExternalEngineError naming what happened (the CLI exits 2); on timeout the whole process group is
// killed, so nothing hangs and nothing is left behind.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Case } from "../case/case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { resolveModelSpec, loadModels } from "../case/models.ts";
import { validateAgainst } from "../schema/validator.ts";
import { packageJson } from "../schema/package-json.ts";
import { displayPath } from "../schema/validator.ts";
import { validateTrace } from "../trace/load.ts";
import type { Trace } from "../trace/schema.ts";
import type { ReportedOutput } from "../trace/outputs-line.ts";
import { hasText } from "../sampling/params.ts";
import { vocabularyOf } from "../model/vocabulary.ts";
import {
  HelloResponseSchema,
  type HelloResponse,
  type ModelFormat,
  MODEL_FORMATS,
  AdapterResponseSchema,
  PROTOCOL,
  PROTOCOL_VERSION,
  type AdapterRequest,
  type HelloRequest,
  type AdapterResponse,
} from "./protocol.ts";

export type ExternalFailure = "crash" | "timeout" | "protocol" | "engine-error" | "unsupported";

/** The engine behind --engine crashed, timed out or broke the protocol: bad input of --engine (exit 2). */
export class ExternalEngineError extends BadInputError {
  constructor(
    readonly kind: ExternalFailure,
    message: string,
  ) {
    super(message, { flag: "--engine" });
    this.name = "ExternalEngineError";
  }
}

export interface EngineResult {
  outputs: ReportedOutput[];
  trace?: Trace;
}

export interface StartOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Longest response line accepted (default 256 MiB). */
  maxLineBytes?: number;
}

export interface ExternalRunOptions {
  /** Per-request timeout (default 60 s). */
  timeoutMs?: number;
  /** Ask for a trace (default true). */
  wantTrace?: boolean;
  /** Exported model files named in the request (the formats the engine declared). */
  files?: AdapterRequest["models"]["files"];
}

interface Pending {
  requestId: number;
  /** Absent for the hello: its answer is a HelloResponse. */
  testCase?: Case;
  resolve(result: EngineResult | HelloResponse["hello"]): void;
  reject(error: ExternalEngineError): void;
  timer: NodeJS.Timeout;
}

const live = new Set<ExternalEngine>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const engine of live) engine.kill();
  });
}

/** The request line for a case: the model as a full spec, the digests of the models it builds, their files. */
export function requestFor(
  testCase: Case,
  requestId: number,
  wantTrace: boolean,
  files?: AdapterRequest["models"]["files"],
): AdapterRequest {
  const spec = resolveModelSpec(testCase.model);
  const models = loadModels({ ...testCase, model: { spec } });
  return {
    protocol: PROTOCOL,
    version: PROTOCOL_VERSION,
    requestId,
    case: { ...testCase, model: { spec } },
    models: {
      target: models.target.graph.digest,
      draft: models.draft?.graphs[0].digest ?? null,
      ...(files ? { files } : {}),
    },
    wantTrace,
    // Detokenizing engines spell outputs with the model's vocabulary (model/vocabulary.ts).
    ...(testCase.workload.requests.some((request) => hasText(request.sampling))
      ? { vocabulary: [...vocabularyOf(spec).pieces] }
      : {}),
  };
}

export class ExternalEngine {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly maxLineBytes: number;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private stdoutLines = 0;
  private stderrTail = "";
  private pending: Pending | undefined;
  private failure: ExternalEngineError | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;
  private nextId = 1;

  private constructor(
    readonly command: string,
    options: StartOptions,
  ) {
    this.maxLineBytes = options.maxLineBytes ?? 256 * 1024 * 1024;
    this.child = spawn("/bin/sh", ["-c", command], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    live.add(this);
    installExitHook();
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        this.exit = { code, signal };
        live.delete(this);
        this.fail(
          new ExternalEngineError(
            "crash",
            `engine exited (${signal ? `signal ${signal}` : `code ${code}`})${this.pending ? ` while running request ${this.pending.requestId}` : ""}${this.stderrSuffix()}`,
          ),
        );
        resolve();
      });
    });
    this.child.on("error", (error) =>
      this.fail(new ExternalEngineError("crash", `cannot start the engine: ${error.message}`)),
    );
    this.child.stdin.on("error", () => {
      // EPIPE: the engine closed its stdin or died; 'close' reports it.
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    this.child.stdout.on("data", (chunk: Buffer) => this.onStdout(chunk));
  }

  static start(command: string, options: StartOptions = {}): ExternalEngine {
    return new ExternalEngine(command, options);
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
    return tail ? `; stderr: ${tail.slice(-500)}` : "";
  }

  /** Fails the request in flight (and every later one) and kills the engine. */
  private fail(error: ExternalEngineError): void {
    this.failure ??= error;
    const pending = this.pending;
    if (pending) {
      this.pending = undefined;
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    if (!this.exit) this.kill();
  }

  /** SIGKILL to the engine's whole process group. */
  kill(): void {
    if (this.exit || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  private onStdout(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline < 0 ? chunk.length : newline;
      if (this.partBytes + (end - start) > this.maxLineBytes) {
        this.fail(
          new ExternalEngineError(
            "protocol",
            `engine stdout line ${this.stdoutLines + 1} is longer than ${this.maxLineBytes} bytes`,
          ),
        );
        return;
      }
      if (end > start) {
        this.parts.push(chunk.subarray(start, end));
        this.partBytes += end - start;
      }
      if (newline < 0) return;
      const text = Buffer.concat(this.parts, this.partBytes).toString("utf8").replace(/\r$/, "");
      this.parts = [];
      this.partBytes = 0;
      this.stdoutLines += 1;
      if (text.trim() !== "") this.onLine(text, this.stdoutLines);
      if (this.failure) return;
      start = newline + 1;
    }
  }

  private onLine(text: string, line: number): void {
    const where = `engine stdout line ${line}`;
    const pending = this.pending;
    if (!pending) {
      this.fail(
        new ExternalEngineError(
          "protocol",
          `${where}: output while no request is in flight (logs belong on stderr): ${text.slice(0, 80)}`,
        ),
      );
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.fail(
        new ExternalEngineError(
          "protocol",
          `${where}: invalid JSON (${(error as Error).message.split("\n")[0]}); stdout carries only protocol lines, logs belong on stderr`,
        ),
      );
      return;
    }
    try {
      const result = pending.testCase ? this.parseResponse(value, pending, where) : this.parseHello(value, where);
      this.pending = undefined;
      clearTimeout(pending.timer);
      pending.resolve(result);
    } catch (error) {
      if (!(error instanceof ExternalEngineError)) throw error;
      if (error.kind === "engine-error" || error.kind === "unsupported") {
        // The engine answered: it stays usable for the next request.
        this.pending = undefined;
        clearTimeout(pending.timer);
        pending.reject(error);
      } else {
        this.fail(error);
      }
    }
  }

  private parseHello(value: unknown, where: string): HelloResponse["hello"] {
    const checked = validateAgainst<HelloResponse>(HelloResponseSchema, value, "hello response");
    if (!checked.ok)
      throw new ExternalEngineError(
        "protocol",
        `${where}: the handshake answer ${displayPath(checked.errors[0].path)} ${checked.errors[0].message}`,
      );
    return checked.value.hello;
  }

  private parseResponse(value: unknown, pending: Pending, where: string): EngineResult {
    const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
    const { trace, ...rest } = (isObject ? value : {}) as Record<string, unknown>;
    const checked = validateAgainst<AdapterResponse>(
      AdapterResponseSchema,
      isObject ? rest : value,
      "adapter response",
    );
    if (!checked.ok)
      throw new ExternalEngineError(
        "protocol",
        `${where}: ${displayPath(checked.errors[0].path)} ${checked.errors[0].message}`,
      );
    const response = checked.value;
    if (response.requestId !== pending.requestId)
      throw new ExternalEngineError(
        "protocol",
        `${where}: /requestId is ${response.requestId}, the request in flight is ${pending.requestId}`,
      );
    if ("error" in response) {
      if (trace !== undefined)
        throw new ExternalEngineError("protocol", `${where}: /trace is not allowed in an error response`);
      throw new ExternalEngineError(
        response.unsupported ? "unsupported" : "engine-error",
        `the engine could not run request ${pending.requestId}: ${response.error}`,
      );
    }
    const expected = pending.testCase!.workload.requests.map((request) => request.id);
    const seen = new Set<number>();
    response.outputs.forEach((output, i) => {
      if (!expected.includes(output.id))
        throw new ExternalEngineError("protocol", `${where}: /outputs/${i}/id: the case has no request ${output.id}`);
      if (seen.has(output.id))
        throw new ExternalEngineError("protocol", `${where}: /outputs/${i}/id: duplicate request ${output.id}`);
      seen.add(output.id);
    });
    const missing = expected.filter((id) => !seen.has(id));
    if (missing.length > 0)
      throw new ExternalEngineError("protocol", `${where}: /outputs: no output for request ${missing.join(", ")}`);
    if (trace === undefined) return { outputs: response.outputs };
    const issues = validateTrace(trace);
    if (issues.length > 0)
      throw new ExternalEngineError("protocol", `${where}: /trace${issues[0].path} ${issues[0].message}`);
    return { outputs: response.outputs, trace: trace as Trace };
  }

  /** Runs one case. Rejects with ExternalEngineError; after a crash, timeout or protocol error the engine is gone. */
  run(testCase: Case, options: ExternalRunOptions = {}): Promise<EngineResult> {
    const requestId = this.nextId++;
    const line = requestFor(testCase, requestId, options.wantTrace ?? true, options.files);
    return this.exchange(line, requestId, testCase, options.timeoutMs ?? 60_000) as Promise<EngineResult>;
  }

  /** The handshake: the engine's name, version and capabilities. Must be the first exchange. */
  hello(options: { timeoutMs?: number; modelFormats?: readonly ModelFormat[]; specconf?: string } = {}) {
    const line: HelloRequest = {
      protocol: PROTOCOL,
      version: PROTOCOL_VERSION,
      hello: {
        specconf: options.specconf ?? packageJson().version,
        modelFormats: [...(options.modelFormats ?? MODEL_FORMATS)],
      },
    };
    return this.exchange(line, 0, undefined, options.timeoutMs ?? 60_000) as Promise<HelloResponse["hello"]>;
  }

  private exchange(line: object, requestId: number, testCase: Case | undefined, timeoutMs: number) {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new Error("one request at a time"));
    const what = testCase ? `request ${requestId}` : "the handshake";
    return new Promise<EngineResult | HelloResponse["hello"]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(
          new ExternalEngineError(
            "timeout",
            `no response to ${what} within ${timeoutMs} ms (engine killed)${this.stderrSuffix()}`,
          ),
        );
      }, timeoutMs);
      this.pending = { requestId, testCase, resolve, reject, timer };
      this.child.stdin.write(`${JSON.stringify(line)}\n`);
    });
  }

  /** Closes stdin (the engine should exit), then kills the process group after `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    if (!this.exit) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.kill(), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

/** Starts `command`, runs one case, and closes it. */
export async function runExternal(
  command: string,
  testCase: Case,
  options: ExternalRunOptions & StartOptions = {},
): Promise<EngineResult> {
  const engine = ExternalEngine.start(command, options);
  try {
    return await engine.run(testCase, options);
  } finally {
    await engine.close();
  }
}
