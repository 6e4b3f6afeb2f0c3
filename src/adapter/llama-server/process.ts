// One llama-server process: started on 127.0.0.1 with `--port 0`, so the server binds a free ephemeral port
// itself (httplib's bind_to_any_port, tools/server/server-http.cpp) and logs it (`listening on
// http://127.0.0.1:PORT`); the port is read from that line of its own log. (Picking a free port first and
// passing it raced with other servers started side by side: one that lost the bind saw the winner's /health
// answer 200, and its requests went to another model's server.) It runs in its own process group (so a
// timeout or close kills it and anything it started), ready once GET /health answers 200. Its stderr (every
// leveled log line, in order: common/log.cpp writes them all to stderr) is kept as numbered lines, which
// log-rounds.ts reads for the per-round data the HTTP API does not return. A process that exits is marked
// dead with its last log lines; the engine starts a fresh one for the next case.
import { spawn, type ChildProcess } from "node:child_process";
import { dirname } from "node:path";

export interface ServerOptions {
  binary: string;
  /** Everything but host and port. */
  args: readonly string[];
  /** Milliseconds to wait for /health. */
  startTimeoutMs: number;
  log: (message: string) => void;
}

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export class ServerProcess {
  readonly lines: string[] = [];
  private partial = "";
  private exited: string | undefined;
  private waiters: (() => void)[] = [];

  /** The port the server bound (0 until its log says). */
  port = 0;

  private constructor(
    readonly child: ChildProcess,
    readonly commandLine: string,
  ) {
    child.stderr!.on("data", (chunk: Buffer) => this.take(chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => this.take(chunk.toString()));
    child.on("exit", (code, signal) => {
      this.exited = `llama-server exited (${signal ?? `code ${code}`}); last log lines: ${this.lines.slice(-5).join(" | ")}`;
      this.wake();
    });
  }

  private take(text: string): void {
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop() ?? "";
    if (parts.length > 0) {
      this.lines.push(...parts);
      this.wake();
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Why the process is gone, or undefined while it runs. */
  get deadReason(): string | undefined {
    return this.exited;
  }

  /** Resolves when a log line from index `from` on satisfies `test` (its index), or rejects after `timeoutMs`. */
  async waitForLine(from: number, test: (line: string) => boolean, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let scanned = from;
    for (;;) {
      for (; scanned < this.lines.length; scanned++) if (test(this.lines[scanned])) return scanned;
      if (this.exited) throw new Error(this.exited);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`llama-server: no expected log line within ${timeoutMs} ms`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  /**
   * Resolves once `test()` holds, tried on every new log line and every 50 ms (it may read state other than
   * the log); rejects when the process exits or `signal` aborts.
   */
  async waitFor(test: () => boolean, signal: AbortSignal): Promise<void> {
    for (;;) {
      if (test()) return;
      if (this.exited) throw new Error(this.exited);
      signal.throwIfAborted();
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  static async start(options: ServerOptions): Promise<ServerProcess> {
    const args = [...options.args, "--host", "127.0.0.1", "--port", "0"];
    // A watchdog shell around the server, in one process group of their own (kill() reaches both): it ends
    // the server when this process is gone (even killed with SIGKILL), and exits when the server does.
    const watchdog = `"$0" "$@" & server=$!; trap 'kill -9 $server 2>/dev/null' EXIT; while kill -0 ${process.pid} 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 0.5; done; kill -0 $server 2>/dev/null || { wait $server; exit $?; }`;
    const child = spawn("bash", ["-c", watchdog, options.binary, ...args], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LLAMA_TRACE: "1", LD_LIBRARY_PATH: dirname(options.binary) },
    });
    const server = new ServerProcess(child, [options.binary, ...args].join(" "));
    try {
      await server.waitHealthy(options.startTimeoutMs);
      options.log(`llama-server ready on port ${server.port} (pid ${child.pid})\n`);
      return server;
    } catch (error) {
      server.kill();
      throw error;
    }
  }

  /** Its own log names the port it bound; then GET /health answers 200 once the models are loaded. */
  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const line = await this.waitForLine(0, (text) => LISTENING.test(text), timeoutMs);
    this.port = Number(LISTENING.exec(this.lines[line])![1]);
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(this.exited);
      try {
        const response = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1000) });
        if (response.ok) return;
      } catch {
        // not answering yet
      }
      await sleep(50);
    }
    throw new Error(`llama-server did not become healthy within ${timeoutMs} ms: ${this.lines.slice(-3).join(" | ")}`);
  }

  /** Kills the whole process group (SIGKILL: a hung server gets no say). */
  kill(): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
