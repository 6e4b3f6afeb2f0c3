// Reading rounds from llama-server's log: the line formats are llama.cpp's own (SLT_* macros of
// tools/server/server-common.h, SPC_DBG of common/speculative.cpp), interleaved over slots as the server
// writes them. Generated logs: random rounds for several slots, printed and interleaved, read back.
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { LogRoundError, readSlotLogs } from "../../../src/adapter/llama-server/log-rounds.ts";

// Verbose logs prefix every line with the elapsed time and a level letter.
const slotLine = (slot: number, task: number, fn: string, message: string) =>
  `0.04.070.425 I slot ${fn.padStart(12).slice(0, 12)}: id ${String(slot).padStart(2)} | task ${task} | ${message}`;
const candidate = (slot: number, rank: number, step: number, token: number) =>
  `0.04.070.425 D spec        draft:  - seq_id ${slot}, draft candidate ${String(rank).padStart(3)}, pos ${String(step).padStart(3)}: ${String(token).padStart(6)} (   0.500) 't${token}'`;

interface GenRound {
  root: number;
  drafts: number[];
  accepted: number;
  logDrafts: boolean;
}

function roundLines(slot: number, position: number, round: GenRound): string[] {
  const lines: string[] = [];
  if (round.logDrafts)
    round.drafts.forEach((token, step) => {
      lines.push(candidate(slot, 0, step, token), candidate(slot, 1, step, token + 1));
    });
  lines.push(
    slotLine(
      slot,
      7 + slot,
      "handle_last_sampled_token",
      `generate_draft: id=${round.root}, #tokens=${position}, #draft=${round.drafts.length}, pos_next=${position}`,
    ),
  );
  lines.push(slotLine(slot, 7 + slot, "update_slots", "slot decode token, id=3"));
  lines.push(
    slotLine(
      slot,
      7 + slot,
      "update_slots",
      `accepted ${String(round.accepted).padStart(2)}/${String(round.drafts.length).padStart(2)} draft tokens`,
    ),
  );
  // The debug line that follows it must not count as a second result.
  lines.push(
    slotLine(
      slot,
      7 + slot,
      "update_slots",
      `accepted ${round.accepted}/${round.drafts.length} draft tokens, new n_tokens = 9`,
    ),
  );
  return lines;
}

const roundArb = fc
  .record({ root: fc.nat(99), drafts: fc.array(fc.nat(99), { minLength: 1, maxLength: 6 }), logDrafts: fc.boolean() })
  .chain((round) => fc.nat(round.drafts.length).map((accepted) => ({ ...round, accepted })));

describe("readSlotLogs", () => {
  test.prop([fc.array(fc.array(roundArb, { maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.nat()])(
    "reads back every slot's rounds from an interleaved log",
    (slots, seed) => {
      const perSlot = slots.map((rounds, slot) => {
        let position = 10;
        const lines = rounds.flatMap((round) => {
          const out = roundLines(slot, position, round);
          position += round.accepted + 1;
          return out;
        });
        // A message printed without its newline runs into the release line, as llama.cpp's log shows it.
        lines.push(
          `0.03.053.426 D No parser definition detected, assuming pure content parser.${slotLine(slot, 7 + slot, "release", "stop processing: n_tokens = 40, truncated = 0")}`,
        );
        return lines;
      });
      // Interleave whole rounds' lines by a seeded order (per slot order kept, as the server's log keeps it).
      const cursors = perSlot.map(() => 0);
      const log: string[] = ["srv  update_slots: all slots are idle"];
      let state = seed;
      while (cursors.some((cursor, slot) => cursor < perSlot[slot].length)) {
        state = (state * 1103515245 + 12345) >>> 0;
        const open = cursors.map((cursor, slot) => slot).filter((slot) => cursors[slot] < perSlot[slot].length);
        const slot = open[state % open.length];
        log.push(perSlot[slot][cursors[slot]++]);
      }
      const read = readSlotLogs(
        log,
        0,
        log.length,
        slots.map((_, slot) => slot),
      );
      slots.forEach((rounds, slot) => {
        const got = read.get(slot)!;
        expect(got.stopLine).toBeDefined();
        expect(got.tasks).toEqual([7 + slot]);
        let position = 10;
        expect(got.rounds).toEqual(
          rounds.map((round) => {
            const expected = {
              slot,
              task: 7 + slot,
              root: round.root,
              rootPosition: position,
              numDrafts: round.drafts.length,
              accepted: round.accepted,
              ...(round.logDrafts ? { drafts: round.drafts } : {}),
            };
            position += round.accepted + 1;
            return expected;
          }),
        );
      });
    },
  );

  it("a slot serving requests in turn: each task's rounds, tasks in the order served", () => {
    const round = (task: number, root: number, position: number) => [
      slotLine(
        2,
        task,
        "handle_last_sampled_token",
        `generate_draft: id=${root}, #tokens=${position}, #draft=2, pos_next=${position}`,
      ),
      slotLine(2, task, "update_slots", "accepted  1/ 2 draft tokens"),
    ];
    const release = (task: number) => slotLine(2, task, "release", "stop processing: n_tokens = 12, truncated = 0");
    const log = [
      slotLine(2, 31, "launch_slot_", "processing task, is_child = 0"),
      ...round(31, 5, 9),
      release(31),
      slotLine(2, 30, "launch_slot_", "processing task, is_child = 0"), // ids need not increase
      release(30),
      ...round(44, 6, 4),
      ...round(44, 8, 6),
      release(44),
    ];
    const read = readSlotLogs(log, 0, log.length, [2]).get(2)!;
    expect(read.tasks).toEqual([31, 30, 44]);
    expect(read.rounds.map((logged) => [logged.task, logged.root, logged.rootPosition])).toEqual([
      [31, 5, 9],
      [44, 6, 4],
      [44, 8, 6],
    ]);
    expect(read.stopLine).toBe(log.length - 1);
  });

  it("each task's end: tokens generated, a normal finish (print_timings) and the line naming it", () => {
    const token = (task: number, n: number) =>
      slotLine(3, task, "process_toke", `n_gen = ${n}, n_remaining = ${9 - n}, next token:    40 'Y'`);
    const log = [
      token(8, 1),
      token(8, 2),
      slotLine(3, 8, "process_toke", "stopped by EOS"),
      token(8, 3),
      slotLine(3, 8, "print_timing", "      total time =       1.93 ms /    17 tokens"),
      slotLine(3, 8, "release", "stop processing: n_tokens = 12, truncated = 0"),
      token(9, 1), // cancelled: released without timings
      slotLine(3, 9, "release", "stop processing: n_tokens = 7, truncated = 0"),
      token(10, 1),
      slotLine(3, 10, "process_toke", "stopped by limit, n_gen = 1, n_predict = 1"),
      slotLine(3, 10, "print_timing", "      total time =       1.93 ms /    17 tokens"),
    ];
    const ends = readSlotLogs(log, 0, log.length, [3]).get(3)!.ends;
    expect([...ends]).toEqual([
      [8, { generated: 3, timed: true, stoppedBy: "eos" }],
      [9, { generated: 1, timed: false }],
      [10, { generated: 1, timed: true, stoppedBy: "limit" }],
    ]);
  });

  it("refuses a result whose draft count differs from its round's", () => {
    const log = [
      slotLine(0, 1, "handle_last_sampled_token", "generate_draft: id=5, #tokens=9, #draft=3, pos_next=9"),
      slotLine(0, 1, "update_slots", "accepted  1/ 2 draft tokens"),
    ];
    expect(() => readSlotLogs(log, 0, log.length, [0])).toThrow(LogRoundError);
  });

  it("refuses a result without a round and a release with a round open", () => {
    expect(() => readSlotLogs([slotLine(0, 1, "update_slots", "accepted  1/ 2 draft tokens")], 0, 1, [0])).toThrow(
      /without a round/,
    );
    const open = [
      slotLine(1, 1, "handle_last_sampled_token", "generate_draft: id=5, #tokens=9, #draft=3, pos_next=9"),
      slotLine(1, 1, "release", "stop processing: n_tokens = 12, truncated = 0"),
    ];
    expect(() => readSlotLogs(open, 0, open.length, [1])).toThrow(/round open/);
  });
});
