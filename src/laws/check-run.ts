// Runs every law that applies to one engine run (and its target-only twin, for lossless).
import type { Case } from "../case/case.ts";
import type { RunResult } from "../engine/run-case.ts";
import { loadModels } from "../engine/run-case.ts";
import { checkAcceptanceCorrectness } from "./acceptance-correctness.ts";
import { checkBonusStride } from "./bonus-stride.ts";
import { checkDraftReference } from "./draft-reference.ts";
import { checkKvConservation } from "./kv-conservation.ts";
import type { LawResult } from "./law.ts";
import { combine } from "./registry.ts";
import { checkLossless } from "./lossless.ts";
import { checkMirrorAcceptance } from "./mirror-acceptance.ts";
import { ReferenceOracle } from "./oracle.ts";
import { checkPerStepPools } from "./per-step-pools.ts";
import { checkPhaseContracts } from "./phase-contracts.ts";
import { checkPositions } from "./positions.ts";
import { checkReferenceDecode } from "./reference-decode.ts";
import { checkRowTokens } from "./row-tokens.ts";
import { checkTreeSelection } from "./tree-selection.ts";

export async function checkRun(testCase: Case, result: RunResult, targetOnly?: RunResult): Promise<LawResult[]> {
  const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  const { trace } = result;
  const laws: LawResult[] = [
    await checkReferenceDecode(trace.requests, oracle),
    checkKvConservation(result.poolChecks, result.steps, result.slotsInUseAtEnd),
    checkPositions(trace),
    targetOnly ? combine(checkRowTokens(trace), checkRowTokens(targetOnly.trace)) : checkRowTokens(trace),
  ];
  if (testCase.engine.mode === "speculative") {
    if (targetOnly?.trace.requests && trace.requests) {
      const baseline = new Map(targetOnly.trace.requests.map((request) => [request.id, request]));
      laws.push(
        await checkLossless(
          trace.requests.map((request) => ({
            request,
            targetOnly: baseline.get(request.id)?.output ?? [],
            baselineAborted: baseline.get(request.id)?.finishReason === "abort",
          })),
          oracle,
        ),
      );
    }
    laws.push(await checkAcceptanceCorrectness(trace, oracle));
    laws.push(await checkDraftReference(trace, oracle));
    laws.push(checkPhaseContracts(trace));
    laws.push(checkBonusStride(trace));
    if (testCase.engine.multiLayer) laws.push(checkPerStepPools(trace));
    else laws.push(checkTreeSelection(trace));
    const kind = testCase.draft?.kind;
    if (kind === "mirror" || kind === "tapped-mirror")
      laws.push(await checkMirrorAcceptance(trace, testCase.engine.numSteps, testCase.engine.numDraftTokens, oracle));
  }
  return laws;
}
