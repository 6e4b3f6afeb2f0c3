// Round attribution from outside node-llama-cpp, on a scripted sequence: each predictTokens() call opens a
// round with exactly its drafts, the counters' validated delta is its accept length, tokens without a decode
// must come from validated drafts; anything the counters cannot account for is a RoundAttributionError.
import { TokenPredictor, type LlamaContextSequence, type Token } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import {
  RecordingPredictor,
  RoundAttributionError,
  RoundTracker,
} from "../../../src/adapter/llama-cpp/round-recorder.ts";

class ScriptedPredictor extends TokenPredictor {
  constructor(private readonly script: number[][]) {
    super();
  }
  reset(): void {}
  pushTokens(): void {}
  predictTokens(): Token[] {
    return (this.script.shift() ?? []) as Token[];
  }
}

/** A stand-in sequence: the counters and KV length the library would show. */
function fakeSequence() {
  const state = { used: 0, unused: 0, validated: 0, refuted: 0, nextTokenIndex: 0 };
  const sequence = {
    get tokenPredictions() {
      return { used: state.used, unused: state.unused, validated: state.validated, refuted: state.refuted };
    },
    get nextTokenIndex() {
      return state.nextTokenIndex;
    },
  } as unknown as LlamaContextSequence;
  return { state, sequence };
}

function setup(script: number[][], prompt: number[]) {
  const { state, sequence } = fakeSequence();
  const predictor = new RecordingPredictor(new ScriptedPredictor(script));
  let next = 0;
  const tracker = new RoundTracker(sequence, predictor, prompt.length, () => next++);
  const seen = [...prompt];
  const emit = (token: number) => {
    tracker.onToken(token, seen);
    seen.push(token);
  };
  return { state, predictor, tracker, emit };
}

describe("round attribution", () => {
  it("turns decodes and validated drafts into rounds", async () => {
    const { state, predictor, tracker, emit } = setup([[7, 8, 9], []], [1, 2, 3]);
    expect(await predictor.predictTokens()).toEqual([7, 8, 9]); // decode 1: prompt + 3 drafts
    Object.assign(state, { validated: 2, refuted: 1, unused: 2, nextTokenIndex: 5 }); // the refuted 9 erased
    emit(7);
    Object.assign(state, { used: 1, unused: 1 });
    emit(8);
    Object.assign(state, { used: 2, unused: 0 });
    emit(9);
    expect(await predictor.predictTokens()).toEqual([]); // decode 2: the root alone
    emit(4);
    expect(tracker.rounds).toEqual([
      { index: 0, rootPosition: 2, root: 3, drafts: [7, 8, 9], validated: 2, produced: [7, 8, 9] },
      { index: 1, rootPosition: 5, root: 9, drafts: [], validated: 0, produced: [4] },
    ]);
    expect(tracker.owedTokens()).toBe(0);
  });

  it("refuses counters that do not account for every draft", async () => {
    const { state, predictor, emit } = setup([[7, 8]], [1, 2, 3]);
    await predictor.predictTokens();
    Object.assign(state, { validated: 1, refuted: 0 });
    expect(() => emit(7)).toThrow(RoundAttributionError);
  });

  it("refuses a token that came neither from a decode nor from a validated draft", async () => {
    const { state, predictor, emit } = setup([[7]], [1, 2, 3]);
    await predictor.predictTokens();
    Object.assign(state, { refuted: 1 });
    emit(5);
    expect(() => emit(6)).toThrow(/neither from a decode nor from a validated draft/);
  });

  it("refuses a decode that does not start at the root", async () => {
    const { state, predictor, emit } = setup([[7], [8]], [1, 2, 3]);
    await predictor.predictTokens();
    Object.assign(state, { refuted: 1, nextTokenIndex: 3 });
    emit(5);
    state.nextTokenIndex = 2; // the root (5) sits at position 3
    await predictor.predictTokens();
    Object.assign(state, { refuted: 2 });
    expect(() => emit(6)).toThrow(/decode started at 2/);
  });
});
