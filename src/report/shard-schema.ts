// What `specconf merge` reads of a shard's report (check --shard K/N --json): untrusted input, checked
// before anything is combined, so a wrong file is one line naming its JSON path (exit 2), never a crash.
import { Type } from "@sinclair/typebox";

const Count = Type.Integer({ minimum: 0 });
const LawStatsSchema = Type.Object({
  runs: Count,
  passed: Count,
  failed: Count,
  ties: Count,
  notCheckable: Count,
  seconds: Type.Number({ minimum: 0 }),
  reasons: Type.Optional(Type.Record(Type.String(), Count)),
});
const Pairs = Type.Array(Type.Tuple([Type.String(), Type.String()]));

export const ChunkRecordSchema = Type.Object({
  law: Type.String(),
  start: Count,
  count: Count,
  runs: Count,
  skipped: Count,
  stats: Type.Record(Type.String(), LawStatsSchema),
  coverage: Type.Object({
    runs: Count,
    counts: Type.Record(Type.String(), Count),
    outside: Type.Record(Type.String(), Count),
    blind: Type.Record(Type.String(), Type.Object({ runs: Count, field: Type.String() })),
  }),
  runSeconds: Type.Number({ minimum: 0 }),
  features: Type.Array(Type.Tuple([Type.String(), Count])),
  relaxations: Type.Array(Type.Object({ id: Type.String(), applied: Count, details: Type.Array(Type.String()) })),
  failure: Type.Optional(Type.Object({ messages: Pairs, violations: Pairs, replays: Pairs })),
  error: Type.Optional(Type.String()),
});

export const ShardReportSchema = Type.Object({
  seed: Type.Integer(),
  engine: Type.Optional(Type.Object({ command: Type.String(), name: Type.String(), restarts: Count })),
  relaxations: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        convention: Type.String(),
        effect: Type.String(),
        laws: Type.Array(Type.String()),
        applied: Count,
        details: Type.Array(Type.String()),
      }),
    ),
  ),
  shard: Type.Object({
    index: Type.Integer({ minimum: 1 }),
    count: Type.Integer({ minimum: 1 }),
    runs: Type.Integer({ minimum: 1 }),
    selected: Type.Array(Type.String()),
    lawFilter: Type.Boolean(),
    properties: Type.Array(Type.String()),
    chunks: Type.Array(ChunkRecordSchema),
    notExercised: Type.Array(Type.Object({ law: Type.String(), reason: Type.String() })),
    capabilities: Type.Optional(Type.Object({})),
    pins: Type.Optional(Pairs),
    required: Type.Optional(
      Type.Union([
        Type.Object({ count: Type.Integer({ minimum: 1 }) }),
        Type.Object({ laws: Type.Array(Type.String(), { minItems: 1 }) }),
      ]),
    ),
  }),
});
