// specconf's one public entry point: what a program embedding the harness imports (`import { checkLaws }
// from "specconf"`, package.json `exports`). Everything else under src/ is internal and may move; these
// names are the contract docs/adapter.md documents. (Issue 24: the docs used to name two deep paths.)
export { checkLaws, type CaseCheck, type CheckOptions, type LawVerdict } from "./check/runner.ts";
export { ExternalSource, type ExternalSourceOptions } from "./sources/external.ts";
export { runCase, type RunOptions } from "./engine/run-case.ts";
export type { RunResult, RequestOutput } from "./trace/run-result.ts";
export { validate, type ValidateOptions, type ValidationReport } from "./validate/validate.ts";
export { LAWS, lawByName } from "./laws/registry.ts";
export type { Law } from "./laws/definition.ts";
export type { Case } from "./case/case.ts";
export { loadCaseFile } from "./case/load.ts";
export { defaultCase } from "./case/default-case.ts";
