// An external engine as a run source: a command speaking the JSON Lines protocol (src/adapter/protocol.ts).
// start() spawns it and handshakes (an engine that cannot start or answer the hello is bad input: exit 2).
// Each run exports the case's models into the model cache in the formats the engine declared and sends
// the case. A case outside the declared capabilities, or one the engine calls unsupported, is Unavailable;
// a crash, timeout, protocol error or error answer on one case is a RunFailure (a failing case, shrunk like
// any other), and the engine is restarted, handshake included, before the next case.
import { BadInputError } from "../errors/bad-input.ts";
import type { Capabilities } from "../adapter/protocol.ts";
import { ExternalEngine, ExternalEngineError, type EngineResult, type StartOptions } from "../adapter/client.ts";
import type { Case } from "../case/case.ts";
import { loadModels } from "../case/models.ts";
import type { RunResult } from "../trace/run-result.ts";
import { ReferenceOracle } from "../reference/oracle.ts";
import type { Trace } from "../trace/schema.ts";
import { outsideCapabilities } from "./capabilities.ts";
import { ModelCache } from "./model-cache.ts";
import { runFromTrace } from "../trace/run-result.ts";
import { textFieldsOf } from "../trace/outputs-line.ts";
import { RunFailure, targetOnlyCase, Unavailable, type RunSource } from "../check/source.ts";

/** The engine could not start or failed its handshake: bad input (exit 2), not a failing case. */
/** The engine behind --engine cannot start or answer the handshake: bad input of --engine (exit 2). */
export class EngineStartError extends BadInputError {
  constructor(message: string) {
    super(message, { flag: "--engine" });
    this.name = "EngineStartError";
  }
}

export interface ExternalSourceOptions extends StartOptions {
  /** Seconds per request before the engine is killed (default 60). */
  timeoutMs?: number;
  /** Where exported models are cached (default .specconf/models). */
  modelCache?: ModelCache;
  /** Called when the engine is restarted after a failure (progress lines). */
  onRestart?: (reason: string) => void;
}

/** A RunResult from what the engine returned; a missing trace becomes one with requests and no events. */
export function runFromEngine(testCase: Readonly<Case>, result: EngineResult): RunResult {
  const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt]));
  // The trace was parsed from the engine's line for this run alone: nothing else holds it, no copy needed.
  const trace: Trace = result.trace ?? { formatVersion: 1, engine: { name: "external" }, events: [] };
  trace.requests ??= result.outputs.map((output) => ({
    id: output.id,
    prompt: prompts.get(output.id) ?? [],
    output: output.tokens,
    finishReason: output.finishReason ?? "length",
    ...(output.stopTokenId !== undefined ? { stopTokenId: output.stopTokenId } : {}),
    ...(output.finishedLength !== undefined ? { finishedLength: output.finishedLength } : {}),
    ...(output.logprobs ? { logprobs: output.logprobs } : {}),
    ...textFieldsOf(output),
  }));
  const base = runFromTrace(trace);
  const outputs = result.outputs.map((output) => ({
    id: output.id,
    tokens: output.tokens,
    finishReason: output.finishReason ?? "length",
    ...(output.stopTokenId !== undefined ? { stopTokenId: output.stopTokenId } : {}),
    ...(output.finishedLength !== undefined ? { finishedLength: output.finishedLength } : {}),
    ...(output.logprobs ? { logprobs: output.logprobs } : {}),
    ...textFieldsOf(output),
    acceptLens: output.acceptLens ?? base.outputs.find((candidate) => candidate.id === output.id)?.acceptLens ?? [],
    cutRounds: 0,
    ...(output.roundsIncludeFirstToken ? { roundsIncludeFirstToken: true } : {}),
  }));
  return { outputs, trace };
}

export class ExternalSource implements RunSource {
  private engine: ExternalEngine | undefined;
  private readonly cache: ModelCache;
  /** Engine restarts after failed cases. */
  restarts = 0;

  private constructor(
    readonly command: string,
    readonly name: string,
    readonly capabilities: Capabilities,
    engine: ExternalEngine,
    private readonly options: ExternalSourceOptions,
  ) {
    this.engine = engine;
    this.cache = options.modelCache ?? new ModelCache();
  }

  private static async handshake(command: string, options: ExternalSourceOptions) {
    if (command.trim() === "") throw new EngineStartError("--engine: the command is empty");
    const engine = ExternalEngine.start(command, options);
    try {
      const hello = await engine.hello({ timeoutMs: options.timeoutMs ?? 60_000 });
      return { engine, hello };
    } catch (error) {
      await engine.close(0);
      if (error instanceof ExternalEngineError)
        throw new EngineStartError(`--engine '${command}' failed its handshake (${error.kind}): ${error.message}`);
      throw error;
    }
  }

  /** Starts the engine and reads its capabilities. Throws EngineStartError. */
  static async start(command: string, options: ExternalSourceOptions = {}): Promise<ExternalSource> {
    const { engine, hello } = await ExternalSource.handshake(command, options);
    return new ExternalSource(command, `${hello.name} ${hello.version}`.trim(), hello.capabilities, engine, options);
  }

  async run(testCase: Case): Promise<RunResult> {
    const outside = outsideCapabilities(this.capabilities, testCase);
    if (outside !== undefined) throw new Unavailable(`the engine did not declare ${outside}`);
    const files = this.cache.files(testCase, this.capabilities.modelFormats);
    if (!this.engine) {
      this.restarts += 1;
      ({ engine: this.engine } = await ExternalSource.handshake(this.command, this.options));
    }
    try {
      const result = await this.engine.run(testCase, { timeoutMs: this.options.timeoutMs ?? 60_000, files });
      // Law "speculation engaged": an engine that reports rounds and shows none for a request did not speculate.
      const observes = this.capabilities.observes ?? [];
      return {
        ...runFromEngine(testCase, result),
        roundsObserved: observes.some((f) => f === "acceptLens" || f === "verify"),
      };
    } catch (error) {
      if (!(error instanceof ExternalEngineError)) throw error;
      if (error.kind === "unsupported") throw new Unavailable(error.message);
      if (error.kind !== "engine-error") {
        // The process is gone (crash) or killed (timeout, protocol): a fresh one serves the next case.
        const dead = this.engine;
        this.engine = undefined;
        await dead.close(0);
        this.options.onRestart?.(`${error.kind}: ${error.message}`);
      }
      throw new RunFailure(error.kind, `${this.name}: ${error.message}`);
    }
  }

  targetOnly(testCase: Case): Promise<RunResult> {
    return this.run(targetOnlyCase(testCase));
  }

  twin(testCase: Case, twin: { of(testCase: Readonly<Case>): Case }): Promise<RunResult> {
    return this.run(twin.of(testCase));
  }

  oracle(testCase: Case): Promise<ReferenceOracle> {
    return ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  }

  async close(): Promise<void> {
    await this.engine?.close();
    this.engine = undefined;
  }
}
