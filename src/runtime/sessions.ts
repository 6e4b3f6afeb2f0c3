// The process-wide ONNX Runtime session cache: the engine, the oracle and the benchmarks share sessions for
// the same graph and runtime options. (Split out of engine/run-case.ts, issue 24.)
import type { ModelSpec } from "../model/spec.ts";
import { ModelSession, type RuntimeOptions } from "./ort.ts";

const sessionCache = new Map<string, Promise<ModelSession>>();

/** Sessions are cached by model digest and runtime options: building one costs tens of milliseconds. */
export function sessionFor(
  bytes: Uint8Array,
  digest: string,
  spec: ModelSpec,
  runtime: RuntimeOptions,
  /** The graph's sliding window (BuiltGraph.window): a property of the bytes, so the digest keys it too. */
  window?: number,
  /** Hybrid models: a request's state before its first row (BuiltGraph.recurrentInitial), also of the bytes. */
  recurrentInitial?: Float64Array,
): Promise<ModelSession> {
  const key = `${digest}:${JSON.stringify(runtime)}`;
  let session = sessionCache.get(key);
  if (!session) {
    session = ModelSession.create(bytes, spec.dtype, spec.hidden, runtime, window, recurrentInitial);
    sessionCache.set(key, session);
    session.catch(() => sessionCache.delete(key));
  }
  return session;
}
