// The statistical laws' confirmation twin (issue 25): the same case with every stochastic request on a fresh
// sampling seed, so its tokens are independent of the run's while everything else (models, prompts, options,
// schedule) stays. Fresh seeds are the old ones shifted by one case-dependent offset: distinct seeds stay
// distinct (replicas stay independent of each other) and the uniform stream mixes each seed through murmur3's
// finalizer, so shifted seeds draw unrelated uniforms. A request without a seed gets its id shifted as its seed.
import type { Case } from "../case/case.ts";
import { isStochastic } from "../sampling/params.ts";
import type { TwinSpec } from "./definition.ts";

const SEED_RANGE = 2 ** 31;

/** A case-dependent shift in [1, 2^31): FNV-1a over the prompts and seeds, so cases do not share it. */
function seedShift(testCase: Readonly<Case>): number {
  let hash = 0x811c9dc5;
  for (const request of testCase.workload.requests)
    for (const value of [request.id, request.sampling?.seed ?? -1, ...request.prompt])
      hash = Math.imul(hash ^ (value & 0xffff), 0x01000193);
  return 1 + ((hash >>> 0) % (SEED_RANGE - 1));
}

export function freshSeedsCase(testCase: Readonly<Case>): Case {
  const shift = seedShift(testCase);
  return {
    ...testCase,
    workload: {
      ...testCase.workload,
      requests: testCase.workload.requests.map((request) =>
        request.sampling && isStochastic(request.sampling)
          ? {
              ...request,
              sampling: { ...request.sampling, seed: ((request.sampling.seed ?? request.id) + shift) % SEED_RANGE },
            }
          : request,
      ),
    },
  };
}

export const FRESH_SEEDS: TwinSpec = {
  kind: "fresh seeds",
  describe: "the same case on fresh sampling seeds",
  of: freshSeedsCase,
  composable: false,
};
