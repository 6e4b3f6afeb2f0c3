// The streamed side of llama-server's /completion (src/adapter/llama-server/completion.ts), against a stand-in
// HTTP server that writes events as llama-server's stream does (one token per event, `stop: true` last): the
// tokens and probabilities gathered in order, a speculative token without probabilities written as the
// one-reply JSON writes it (logprob 0, no alternatives), and an abort after the first event returning what
// arrived, marked aborted, with the connection closed (what makes the server cancel the task).
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { completeStreamed } from "../../../src/adapter/llama-server/completion.ts";
import type { ServerProcess } from "../../../src/adapter/llama-server/process.ts";

let server: Server | undefined;

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A stand-in server: `respond` writes the events; resolves with its url and whether the client hung up. */
async function standIn(respond: (response: ServerResponse) => void) {
  const state = { closedByClient: false, body: undefined as Record<string, unknown> | undefined };
  server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      state.body = JSON.parse(text) as Record<string, unknown>;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.on("close", () => (state.closedByClient = !response.writableFinished));
      respond(response);
    });
  });
  await new Promise<void>((listening) => server!.listen(0, "127.0.0.1", listening));
  const port = (server.address() as AddressInfo).port;
  return { process: { url: `http://127.0.0.1:${port}` } as ServerProcess, state };
}

const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const BODY = { prompt: [1, 5, 9], n_predict: 3, n_probs: 1 };

describe("completeStreamed", () => {
  it("gathers tokens and probabilities; a token without them gets the one-reply form", async () => {
    const { process, state } = await standIn((response) => {
      const first = {
        tokens: [5],
        content: "ab",
        completion_probabilities: [{ id: 5, logprob: -0.25, top_logprobs: [] }],
      };
      response.write(event(first));
      response.write(event({ tokens: [6], content: "", stop: false })); // text held back
      const counts = { tokens_predicted: 2, tokens_evaluated: 3, stopping_word: "" };
      response.end(
        event({
          tokens: [],
          content: "",
          stop: true,
          stop_type: "limit",
          timings: { draft_n: 1, draft_n_accepted: 1 },
          ...counts,
        }),
      );
    });
    const never = new AbortController().signal;
    const reply = await completeStreamed(process, BODY, never, never, () => undefined);
    expect(state.body).toMatchObject({ ...BODY, stream: true });
    expect(reply).toEqual({
      tokens: [5, 6],
      stop_type: "limit",
      aborted: false,
      tokens_cached: undefined,
      timings: { draft_n: 1, draft_n_accepted: 1 },
      completion_probabilities: [
        { id: 5, logprob: -0.25, top_logprobs: [] },
        { id: 6, logprob: 0, top_logprobs: [] },
      ],
      // The events as deltas (the final one repeats nothing), and the final event's counts.
      deltas: [
        { text: "ab", tokens: [5] },
        { text: "", tokens: [6] },
      ],
      tokens_predicted: 2,
      tokens_evaluated: 3,
      stopping_word: "",
    });
  });

  it("an abort after the first event: what arrived, marked aborted; the connection is closed", async () => {
    const { process, state } = await standIn((response) => response.write(event({ tokens: [7] }))); // then hangs
    const cut = new AbortController();
    const reply = await completeStreamed(process, BODY, new AbortController().signal, cut.signal, () => cut.abort());
    expect(reply).toMatchObject({ tokens: [7], aborted: true });
    await expect.poll(() => state.closedByClient).toBe(true);
  });

  it("the case's budget running out is an error, not an abort", async () => {
    const { process } = await standIn((response) => response.write(event({ tokens: [7] })));
    const budget = new AbortController();
    const reply = completeStreamed(process, BODY, budget.signal, new AbortController().signal, () => budget.abort());
    await expect(reply).rejects.toThrow();
  });
});
