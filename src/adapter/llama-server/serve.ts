// llama-server behind the external-engine protocol (src/adapter/protocol.ts, version 2): JSON Lines on stdin
// and stdout. A hello is answered with the capabilities (capabilities.ts); each request runs its case on the
// server for its model set (launch.ts), started on first use and kept for the next cases (at most
// MAX_SERVERS alive, least recently used killed first). A case that times out, crashes the server or whose log
// does not line up is answered with an error (specconf shrinks it like any failing case) and its server is
// killed (the whole process group) and started afresh by the next case that needs it.
import { spawnSync } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { AdapterResponse } from "../protocol.ts";
import { helloIssue, isHello, respondToCase, serveLines, type CaseEngine } from "../respond.ts";
import { modelPaths, type ModelDirOptions } from "../llama-cpp/model-files.ts";
import { CAPABILITIES, ENGINE_NAME, unsupportedReason } from "./capabilities.ts";
import { serverArgs, serverKey, slotContextOf } from "./launch.ts";
import { ServerProcess } from "./process.ts";
import { runOnServer } from "./run-case.ts";
import { serverTrace } from "./trace.ts";

/** The server's report of each slot's context (tools/server/server-context.cpp, load_model). */
const SLOT_CONTEXT = /initializing, n_slots = \d+, n_ctx_slot = (\d+)/;

/** Servers kept alive: a case, its target-only baseline and the next case's usually share their models. */
const MAX_SERVERS = 4;

export interface ServerServeOptions extends ModelDirOptions {
  binary: string;
  /** Milliseconds one case may take (its requests together) before its server is killed. */
  caseTimeoutMs: number;
  /** Arguments added to every server's command line after specconf's own (`engine llama-server --server-flag`). */
  serverFlags?: readonly string[];
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

  /**
   * The running server for `key`, or a fresh one started with `args`. `slotContext`, when given, is checked
   * against the context per slot the server reports (`initializing, ..., n_ctx_slot = N`): a server whose slots
   * hold another context is killed and the call fails (launch.ts maps the case's context to a flag).
   */
  async get(key: string, args: string[], slotContext?: number): Promise<ServerProcess> {
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
    const reported = server.lines.map((line) => SLOT_CONTEXT.exec(line)?.[1]).find((found) => found !== undefined);
    if (slotContext !== undefined && Number(reported) !== slotContext) {
      server.kill();
      throw new Error(`llama-server reports ${reported ?? "no"} positions per slot; the case needs ${slotContext}`);
    }
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

/** The case engine the shared protocol handling (../respond.ts) drives: a case runs on its model set's server. */
export function serverCaseEngine(pool: ServerPool, options: ServerServeOptions, version: string): CaseEngine {
  return {
    unsupportedReason,
    async run(request) {
      let key: string | undefined;
      try {
        const paths = modelPaths(request, options);
        const args = [...serverArgs(request.case, paths), ...(options.serverFlags ?? [])];
        key = serverKey(request.case, paths);
        const server = await pool.get(key, args, slotContextOf(request.case));
        const runs = await runOnServer(server, request.case, options.caseTimeoutMs);
        const outputs = runs.map((run) => run.output);
        if (!request.wantTrace) return { outputs };
        const trace = serverTrace(request.case, runs, {
          engineVersion: version,
          targetDigest: request.models.target,
          draftDigest: request.models.draft,
        });
        return { outputs, trace };
      } catch (error) {
        if (key) pool.discard(key); // a timeout, crash or unreadable log: the next case gets a fresh server
        throw error;
      }
    },
  };
}

export function respond(
  pool: ServerPool,
  value: unknown,
  options: ServerServeOptions,
  version: string,
): Promise<AdapterResponse> {
  return respondToCase(value, serverCaseEngine(pool, options, version));
}

/** Serves until `input` ends, then kills every server it started. */
export async function serveLlamaServer(input: Readable, output: Writable, options: ServerServeOptions): Promise<void> {
  const version = binaryVersion(options.binary);
  const pool = new ServerPool(options);
  const engine = serverCaseEngine(pool, options, version);
  try {
    await serveLines(input, output, {
      async answer(value) {
        if (!isHello(value)) return respondToCase(value, engine);
        const issue = helloIssue(value);
        if (issue) options.log(`hello: ${issue} (answered anyway)\n`);
        return { hello: { name: ENGINE_NAME, version, capabilities: CAPABILITIES } };
      },
    });
  } finally {
    pool.close();
  }
}
