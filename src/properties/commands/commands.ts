// Commands of the model-based suite (fc.commands): add a request, run a step (optionally with an abort or
// a retract armed before one of its forwards), abort or retract between steps. The model is simple: each
// request's target-only greedy output (computed alone) and whether it was aborted. After every command
// the system's checks run, and every request's output must agree with the model, tie-aware: equal to the
// expected output when finished, a prefix of it while running or once aborted.
import fc from "fast-check";
import type { EngineSystem, Hook } from "./system.ts";
import { expectedOutput } from "./system.ts";

export interface ModelRequest {
  id: number;
  prompt: number[];
  maxNewTokens: number;
  expected: number[];
  aborted: boolean;
}

export interface EngineModel {
  requests: ModelRequest[];
  maxRequests: number;
}

export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailure";
  }
}

/** Checks after every command; throws CommandFailure naming the first problem. */
export async function verify(model: EngineModel, real: EngineSystem, after: string): Promise<void> {
  const problems = await real.problems();
  for (const entry of model.requests) {
    const request = real.engine.requests.get(entry.id);
    if (!request) {
      problems.push(`request ${entry.id} is unknown to the engine`);
      continue;
    }
    const got = request.output;
    let index = 0;
    while (index < got.length && index < entry.expected.length && got[index] === entry.expected[index]) index++;
    const finished = request.status === "finished" && request.finishReason !== "abort";
    if (index < got.length || (finished && index < entry.expected.length)) {
      if (index < got.length && index < entry.expected.length) {
        // Tie-aware: the reference margin at the first difference decides.
        const reference = await real.oracle.targetOver([...entry.prompt, ...got.slice(0, index)]);
        if (reference.predictions[entry.prompt.length - 1 + index].margin < real.oracle.epsilon) continue;
      }
      problems.push(
        `request ${entry.id}: output [${got.join(" ")}] ${finished ? "differs from" : "is not a prefix of"} the target-only greedy output [${entry.expected.join(" ")}]`,
      );
    }
    if (entry.aborted && request.status !== "finished")
      problems.push(`request ${entry.id} was aborted but is ${request.status}`);
    if (!entry.aborted && request.finishReason === "abort")
      problems.push(`request ${entry.id} finished as aborted without an abort`);
  }
  if (problems.length > 0)
    throw new CommandFailure(
      `after ${after}: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`,
    );
}

export class AddRequest implements fc.AsyncCommand<EngineModel, EngineSystem> {
  constructor(
    readonly suffix: number[],
    readonly maxNewTokens: number,
  ) {}

  check(model: Readonly<EngineModel>): boolean {
    return model.requests.length < model.maxRequests;
  }

  async run(model: EngineModel, real: EngineSystem): Promise<void> {
    const spec = real.oracle.spec;
    const id = model.requests.length;
    const prompt = [...spec.preamble, ...this.suffix.map((raw) => 3 + (raw % (spec.vocab - 3)))];
    const expected = await expectedOutput(real.testCase, prompt, this.maxNewTokens);
    real.engine.addRequest({ id, prompt, maxNewTokens: this.maxNewTokens, arrivalStep: real.engine.step });
    real.replayCase.workload.requests.push({
      id,
      prompt,
      maxNewTokens: this.maxNewTokens,
      arrivalStep: real.engine.step,
    });
    model.requests.push({ id, prompt, maxNewTokens: this.maxNewTokens, expected, aborted: false });
    await verify(model, real, this.toString());
  }

  toString(): string {
    return `AddRequest(suffix [${this.suffix.join(",")}], max ${this.maxNewTokens})`;
  }
}

export class Step implements fc.AsyncCommand<EngineModel, EngineSystem> {
  constructor(readonly hook?: { kind: Hook["kind"]; request: number; beforeForward: number }) {}

  check(model: Readonly<EngineModel>): boolean {
    return model.requests.length > 0;
  }

  async run(model: EngineModel, real: EngineSystem): Promise<void> {
    if (this.hook) {
      const target = model.requests[this.hook.request % model.requests.length];
      real.hooks = [{ ...this.hook, request: target.id }];
      if (this.hook.kind === "abort") {
        const request = real.engine.requests.get(target.id);
        // The hook fires only if the step reaches that forward and the request is still live then.
        const before = request?.status;
        await real.engine.runStep();
        real.hooks = [];
        if (before !== "finished" && real.engine.requests.get(target.id)?.finishReason === "abort")
          target.aborted = true;
        await verify(model, real, this.toString());
        return;
      }
    }
    await real.engine.runStep();
    real.hooks = [];
    await verify(model, real, this.toString());
  }

  toString(): string {
    return this.hook
      ? `Step(${this.hook.kind} request #${this.hook.request} before forward ${this.hook.beforeForward})`
      : "Step()";
  }
}

export class Abort implements fc.AsyncCommand<EngineModel, EngineSystem> {
  constructor(readonly request: number) {}

  check(model: Readonly<EngineModel>): boolean {
    return model.requests.length > 0;
  }

  async run(model: EngineModel, real: EngineSystem): Promise<void> {
    const target = model.requests[this.request % model.requests.length];
    const request = real.engine.requests.get(target.id)!;
    if (request.status !== "finished") {
      real.engine.abort(target.id);
      real.replayCase.workload.aborts.push({ request: target.id, step: real.engine.step, beforeForward: 0 });
      target.aborted = true;
    }
    await verify(model, real, this.toString());
  }

  toString(): string {
    return `Abort(request #${this.request})`;
  }
}

export class Retract implements fc.AsyncCommand<EngineModel, EngineSystem> {
  constructor(readonly request: number) {}

  check(model: Readonly<EngineModel>): boolean {
    return model.requests.length > 0;
  }

  async run(model: EngineModel, real: EngineSystem): Promise<void> {
    const target = model.requests[this.request % model.requests.length];
    if (real.engine.requests.get(target.id)?.active) {
      real.engine.retract(target.id);
      real.replayCase.workload.retracts!.push({ request: target.id, step: real.engine.step, beforeForward: 0 });
    }
    await verify(model, real, this.toString());
  }

  toString(): string {
    return `Retract(request #${this.request})`;
  }
}

export function commandsArbitrary(
  maxCommands: number,
): fc.Arbitrary<Iterable<fc.AsyncCommand<EngineModel, EngineSystem>>> {
  const index = fc.nat({ max: 2 });
  const hook = fc.record({
    kind: fc.constantFrom<Hook["kind"]>("abort", "retract"),
    request: index,
    beforeForward: fc.nat({ max: 5 }),
  });
  return fc.commands(
    [
      fc
        .record({
          suffix: fc.array(fc.nat({ max: 4095 }), { minLength: 1, maxLength: 8 }),
          max: fc.integer({ min: 1, max: 8 }),
        })
        .map(({ suffix, max }) => new AddRequest(suffix, max)),
      fc.constant(new Step()),
      fc.constant(new Step()),
      fc.constant(new Step()),
      hook.map((h) => new Step(h)),
      hook.map((h) => new Step(h)),
      index.map((request) => new Abort(request)),
      index.map((request) => new Retract(request)),
    ],
    { maxCommands, size: "medium" },
  );
}

/** After the commands: step until nothing is left (bounded), then every unaborted request must be finished. */
export async function drain(model: EngineModel, real: EngineSystem, maxSteps = 200): Promise<void> {
  for (let i = 0; i < maxSteps && real.engine.hasWork(); i++) {
    await real.engine.runStep();
    await verify(model, real, `drain step ${real.engine.step - 1}`);
  }
  if (real.engine.hasWork()) throw new CommandFailure(`the engine still has work after ${maxSteps} drain steps`);
  for (const entry of model.requests) {
    const request = real.engine.requests.get(entry.id)!;
    if (!entry.aborted && request.status !== "finished") throw new CommandFailure(`request ${entry.id} never finished`);
  }
  // The end of the run: the prefix cache lets go, and every pool is empty.
  real.engine.finish();
  for (const pool of real.pools())
    if (pool.numUsedSlots() > 0)
      throw new CommandFailure(`pool ${pool.name} holds ${pool.numUsedSlots()} slots after the run ended`);
}
