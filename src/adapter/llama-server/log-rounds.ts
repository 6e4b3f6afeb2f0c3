// Speculative rounds read from llama-server's own log: its HTTP API returns only the totals
// (timings.draft_n, draft_n_accepted), so the engine runs it with `-v` (debug lines) and LLAMA_TRACE=1 and
// reads, per slot (each request of a case is pinned to its own slot with id_slot):
//   spec ...: - seq_id S, draft candidate 0, pos I: ID ...   the drafter's best token at draft step I
//                                                           (common/speculative.cpp, draft-simple and draft-eagle3;
//                                                           seq_id is the slot id; n-gram drafters log none)
//   slot ...: id S | task T | generate_draft: id=R, #tokens=., #draft=N, pos_next=P
//                                                           a round: root token R at position P, N drafts
//   slot ...: id S | task T | accepted K/N draft tokens      its result (LLAMA_TRACE > 0)
//   slot ...: id S | task T | stop processing: ...          the request released its slot
// A slot serves one task per request; with request slots several requests take one slot in turn, and the
// rounds of each are those of its task.
// A round's drafts are the candidate-0 tokens of the steps logged since the slot's last step 0; when none were
// logged (n-gram) only the accepted ones are known (they are the tokens the round emitted). Anything that
// does not line up (a result without a round, counts that differ) is an error, never a guess.

export interface LoggedRound {
  slot: number;
  task: number;
  root: number;
  rootPosition: number;
  numDrafts: number;
  /** The drafted tokens (numDrafts of them), or undefined when the drafter logs none (n-gram). */
  drafts?: number[];
  accepted: number;
}

export interface SlotLog {
  rounds: LoggedRound[];
  /**
   * The tasks the slot served, in order (its requests, one task each: with request slots a slot serves several
   * requests in turn, and the n-th task is the n-th request sent to it).
   */
  tasks: number[];
  /** Log line index of the slot's last "stop processing" line, when seen. */
  stopLine?: number;
  /** What each task's own lines say about how it ended (an aborted stream may lose the server's last event). */
  ends: Map<number, TaskEnd>;
}

/**
 * A task's end as its log lines tell it: the tokens it generated (process_token's `n_gen = N` debug line), whether
 * it finished normally (print_timings' `total time` line, written just before the final response; a cancelled
 * task is released without it) and the debug line naming the end (`stopped by EOS`, `stopped by limit`, `stopped
 * due to running out of context capacity`; a stop string has none).
 */
export interface TaskEnd {
  generated: number;
  timed: boolean;
  stoppedBy?: "eos" | "limit";
}

// Verbose logs carry a prefix (elapsed time and level letter, "0.04.070.425 D "), and a message printed without
// its newline runs into the next line ("...content parser.0.03.053.454 I slot release: ..."): the patterns are
// not anchored at the line start.
const SLOT_LINE = /slot\s+\S+: id\s+(\d+) \| task (-?\d+) \| (.*)$/;
const CANDIDATE = /- seq_id (\d+), draft candidate\s+(\d+), pos\s+(\d+):\s+(-?\d+)/;
const GENERATE = /^generate_draft: id=(-?\d+), #tokens=\d+, #draft=(\d+), pos_next=(\d+)/;
// The LLAMA_TRACE line ("accepted  3/ 3 draft tokens"), not the debug line after it ("..., new n_tokens = 9").
const ACCEPTED = /^accepted\s+(\d+)\/\s*(\d+) draft tokens( \(restore checkpoint\))?$/;
const GENERATED = /^n_gen = (\d+), n_remaining = /;
const TIMED = /^\s*total time = /;
const STOPPED_EOS = /^stopped by EOS/;
const STOPPED_LIMIT = /^stopped (by limit|due to running out of context capacity)/;
export const STOP_PROCESSING = /slot\s+\S+: id\s+(\d+) \| task -?\d+ \| stop processing/;

export class LogRoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LogRoundError";
  }
}

/** Reads the rounds of every slot in `slots` from log lines [from, to). */
export function readSlotLogs(
  lines: readonly string[],
  from: number,
  to: number,
  slots: readonly number[],
): Map<number, SlotLog> {
  const logs = new Map<number, SlotLog>(slots.map((slot) => [slot, { rounds: [], tasks: [], ends: new Map() }]));
  const drafting = new Map<number, number[]>();
  const open = new Map<number, LoggedRound>();
  for (let index = from; index < to; index++) {
    const line = lines[index];
    const candidate = CANDIDATE.exec(line);
    if (candidate) {
      const [seq, rank, step, token] = candidate.slice(1).map(Number);
      if (rank !== 0 || !logs.has(seq)) continue;
      if (step === 0) drafting.set(seq, []);
      const drafts = drafting.get(seq);
      if (!drafts || drafts.length !== step)
        throw new LogRoundError(`slot ${seq}: draft step ${step} logged out of order (line ${index})`);
      drafts.push(token);
      continue;
    }
    const slotLine = SLOT_LINE.exec(line);
    if (!slotLine) continue;
    const slot = Number(slotLine[1]);
    const log = logs.get(slot);
    if (!log) continue;
    const task = Number(slotLine[2]);
    if (task >= 0 && !log.tasks.includes(task)) log.tasks.push(task);
    const message = slotLine[3];
    if (task >= 0) {
      const end = log.ends.get(task) ?? { generated: 0, timed: false };
      log.ends.set(task, end);
      const generated = GENERATED.exec(message);
      if (generated) end.generated = Math.max(end.generated, Number(generated[1]));
      else if (TIMED.test(message)) end.timed = true;
      else if (STOPPED_EOS.test(message)) end.stoppedBy = "eos";
      else if (STOPPED_LIMIT.test(message)) end.stoppedBy = "limit";
    }
    const generate = GENERATE.exec(message);
    if (generate) {
      if (open.has(slot))
        throw new LogRoundError(`slot ${slot}: a round started before the last one's result (line ${index})`);
      const [root, numDrafts, rootPosition] = generate.slice(1).map(Number);
      const logged = drafting.get(slot);
      drafting.delete(slot);
      const round: LoggedRound = { slot, task, root, rootPosition, numDrafts, accepted: -1 };
      if (logged && logged.length >= numDrafts) round.drafts = logged.slice(0, numDrafts);
      open.set(slot, round);
      continue;
    }
    const accepted = ACCEPTED.exec(message);
    if (accepted) {
      const round = open.get(slot);
      if (!round) throw new LogRoundError(`slot ${slot}: a result without a round (line ${index})`);
      const [count, of] = accepted.slice(1).map(Number);
      if (of !== round.numDrafts)
        throw new LogRoundError(
          `slot ${slot}: result over ${of} drafts for a round of ${round.numDrafts} (line ${index})`,
        );
      round.accepted = count;
      log.rounds.push(round);
      open.delete(slot);
      continue;
    }
    if (STOP_PROCESSING.test(line)) {
      if (open.has(slot)) throw new LogRoundError(`slot ${slot}: released with a round open (line ${index})`);
      log.stopLine = index;
    }
  }
  return logs;
}
