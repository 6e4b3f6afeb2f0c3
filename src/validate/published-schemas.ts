// The JSON Schema files under schemas/, emitted from the TypeBox definitions (the same objects the
// loaders validate with), translated to JSON Schema 2020-12. scripts/emit-schemas.ts writes them and
// test/validate/schemas.test.ts fails when a checked-in file differs from what the code emits.
import { CaseSchema, CASE_FORMAT_VERSION } from "../case/case.ts";
import { GoldenSchema, GOLDEN_FORMAT_VERSION } from "../golden/schema.ts";
import { toDraft2020 } from "../schema/validator.ts";
import { TraceSchema, TRACE_FORMAT_VERSION } from "../trace/schema.ts";
import { OutputLineSchema, OUTPUTS_FORMAT_VERSION } from "../trace/outputs-line.ts";
import {
  AdapterRequestSchema,
  AdapterResponseSchema,
  HelloRequestSchema,
  HelloResponseSchema,
  PROTOCOL_VERSION,
} from "../adapter/protocol.ts";

export const SCHEMA_DIR = "schemas";

interface Published {
  file: string;
  title: string;
  description: string;
  schema: object;
}

const PUBLISHED: readonly Published[] = [
  {
    file: "case.schema.json",
    title: `specconf case (formatVersion ${CASE_FORMAT_VERSION})`,
    description:
      "One input for run, replay, golden suites and external engines: model, draft, engine config, workload.",
    schema: CaseSchema,
  },
  {
    file: "trace.schema.json",
    title: `specconf trace (formatVersion ${TRACE_FORMAT_VERSION})`,
    description:
      "One event per forward, rows read from the tensors passed to the runtime. Only a small core is required; each law says 'not checkable' for what a trace lacks.",
    schema: TraceSchema,
  },
  {
    file: "golden.schema.json",
    title: `specconf golden file (formatVersion ${GOLDEN_FORMAT_VERSION})`,
    description:
      "A suite of cases with the reference's expected results: greedy tokens with margins, rounds with drafts and draft margins, epsilon, models by spec and digest.",
    schema: GoldenSchema,
  },
  {
    file: "outputs.schema.json",
    title: `specconf outputs line (formatVersion ${OUTPUTS_FORMAT_VERSION})`,
    description: "One line of an outputs .jsonl file for specconf validate: one request of one golden case.",
    schema: OutputLineSchema,
  },
  {
    file: "adapter-request.schema.json",
    title: `specconf engine protocol request (version ${PROTOCOL_VERSION})`,
    description: "One line specconf writes to an external engine's stdin.",
    schema: AdapterRequestSchema,
  },
  {
    file: "adapter-response.schema.json",
    title: `specconf engine protocol response (version ${PROTOCOL_VERSION})`,
    description: "One line an external engine writes to its stdout per request.",
    schema: AdapterResponseSchema,
  },
  {
    file: "adapter-hello.schema.json",
    title: `specconf engine protocol hello (version ${PROTOCOL_VERSION})`,
    description: "The first line specconf writes to an external engine's stdin: the handshake.",
    schema: HelloRequestSchema,
  },
  {
    file: "adapter-hello-response.schema.json",
    title: `specconf engine protocol hello response (version ${PROTOCOL_VERSION})`,
    description: "The engine's answer to the hello: its name, version and capabilities.",
    schema: HelloResponseSchema,
  },
];

/** File name -> exact file text. */
export function publishedSchemas(): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of PUBLISHED) {
    const { description: _, ...body } = toDraft2020(JSON.parse(JSON.stringify(entry.schema))) as Record<
      string,
      unknown
    >;
    const document = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: `urn:specconf:${entry.file.replace(/\.schema\.json$/, "")}`,
      title: entry.title,
      description: entry.description,
      ...body,
    };
    out.set(entry.file, `${JSON.stringify(document, null, 2)}\n`);
  }
  return out;
}
