// Law "draft schedule": most requests carry a speculation schedule (a third of its rounds with speculation
// off, the others resized up to S), chains only, over every draft with a model (so the draft KV must catch
// up when speculation resumes) and prompt lookup, batches mixing scheduled and unscheduled requests, retracts.
import { DRAFT_SCHEDULE } from "../../laws/draft-schedule.ts";
import { lawProperty } from "../law-property.ts";

export default lawProperty(
  DRAFT_SCHEDULE,
  "speculation schedules (off, on, resized) on most requests; chains, no overlap; rounds long enough to switch",
  {
    draftSchedule: true,
    drafts: ["mirror", "eagle", "noisy-mirror", "tapped-mirror", "truncated-mirror", "eagle3-mirror", "ngram"],
    draftWeights: {},
    topks: [1],
    multiLayer: [false],
    overlap: [false],
    steps: { min: 1, max: 4 },
    maxNewTokens: { min: 4, max: 10 },
    retracts: { min: 0, max: 1 },
  },
);
