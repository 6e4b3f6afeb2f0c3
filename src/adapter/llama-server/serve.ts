// llama-server behind the external-engine protocol (src/adapter/protocol.ts, version 2): JSON Lines on stdin
// and stdout. A hello is answered with the capabilities (capabilities.ts); each request runs its case on the
// server for its model set (launch.ts), started on first use and kept for the next cases (at most
// MAX_SERVERS alive, least recently used killed first). A case that times out, crashes the server or whose log
// does not line up is answered with an error (specconf shrinks it like any failing case) and its server is
// killed (the whole process group) and started afresh by the next case that needs it.
import { spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { AdapterRequestSchema, HelloRequestSchema, type AdapterRequest, type AdapterResponse } from "../protocol.ts";
import { validateAgainst } from "../../schema/validator.ts";
import { modelPaths, type ModelDirOptions } from "../llama-cpp/model-files.ts";
import { CAPABILITIES, ENGINE_NAME, unsupportedReason } from "./capabilities.ts";
import { serverArgs, serverKey } from "./launch.ts";
import { ServerProcess } from "./process.ts";
import { runOnServer } from "./run-case.ts";
import { serverTrace } from "./trace.ts";

/** Servers kept alive: a case, its target-only baseline and the next case's usually share their models. */
const MAX_SERVERS = 4;

export interface ServerServeOptions extends ModelDirOptions {
  binary: string;
  /** Milliseconds one case may take (its requests together) before its server is killed. */
  caseTimeoutMs: number;
  log: (message: string) => void;
}

/** `llama-server --version`'s "version: N (commit)", the engine version every trace records. */
export function binaryVersion(binary: string): string {
  const result = spawnSync(binary, ["--version"], { encoding: "utf8", env: { ...process.env } });
  const text = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  return /version: (.+)/.exec(text)?.[1]?.trim() ?? "unknown";
}

export class ServerPool {
  private readonly servers = new Map<string, ServerProcess>();

  constructor(private readonly options: ServerServeOptions) {}

  async get(key: string, args: string[]): Promise<ServerProcess> {
    const running = this.servers.get(key);
    if (running && !running.deadReason) {
      this.servers.delete(key); // re-inserted last: most recently used
      this.servers.set(key, running);
      return running;
    }
    this.servers.delete(key);
    while (this.servers.size >= MAX_SERVERS) {
      const [oldest, server] = this.servers.entries().next().value!;
      server.kill();
      this.servers.delete(oldest);
    }
    const server = await ServerProcess.start({
      binary: this.options.binary,
      args,
      startTimeoutMs: 60_000,
      log: this.options.log,
    });
    this.servers.set(key, server);
    return server;
  }

  discard(key: string): void {
    this.servers.get(key)?.kill();
    this.servers.delete(key);
  }

  close(): void {
    for (const server of this.servers.values()) server.kill();
    this.servers.clear();
  }
}

function requestIdOf(value: unknown): number {
  const id = typeof value === "object" && value !== null ? (value as { requestId?: unknown }).requestId : undefined;
  return Number.isInteger(id) ? (id as number) : 0;
}

export async function respond(
  pool: ServerPool,
  value: unknown,
  options: ServerServeOptions,
  version: string,
): Promise<AdapterResponse> {
  const requestId = requestIdOf(value);
  const checked = validateAgainst<AdapterRequest>(AdapterRequestSchema, value, "adapter request");
  if (!checked.ok)
    return { requestId, error: `invalid request: ${checked.errors[0].path || "/"} ${checked.errors[0].message}` };
  const request = checked.value;
  const reason = unsupportedReason(request.case);
  if (reason) return { requestId, error: reason, unsupported: true };
  let key: string | undefined;
  try {
    const paths = modelPaths(request, options);
    const args = serverArgs(request.case, paths);
    key = serverKey(request.case, paths);
    const server = await pool.get(key, args);
    const runs = await runOnServer(server, request.case, options.caseTimeoutMs);
    const outputs = runs.map((run) => run.output);
    if (!request.wantTrace) return { requestId, outputs };
    const trace = serverTrace(request.case, runs, {
      engineVersion: version,
      targetDigest: request.models.target,
      draftDigest: request.models.draft,
    });
    return { requestId, outputs, trace };
  } catch (error) {
    if (key) pool.discard(key); // a timeout, crash or unreadable log: the next case gets a fresh server
    return { requestId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

function write(output: Writable, value: unknown): Promise<void> {
  return new Promise((resolve, reject) =>
    output.write(`${JSON.stringify(value)}\n`, (error) => (error ? reject(error) : resolve())),
  );
}

/** Serves until `input` ends, then kills every server it started. */
export async function serveLlamaServer(input: Readable, output: Writable, options: ServerServeOptions): Promise<void> {
  const version = binaryVersion(options.binary);
  const pool = new ServerPool(options);
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        await write(output, { requestId: 0, error: "request line is not JSON" });
        continue;
      }
      if (typeof value === "object" && value !== null && "hello" in value) {
        const hello = validateAgainst(HelloRequestSchema, value, "hello");
        if (!hello.ok)
          options.log(`hello: ${hello.errors[0].path || "/"} ${hello.errors[0].message} (answered anyway)\n`);
        await write(output, { hello: { name: ENGINE_NAME, version, capabilities: CAPABILITIES } });
        continue;
      }
      await write(output, await respond(pool, value, options, version));
    }
  } finally {
    pool.close();
  }
}
