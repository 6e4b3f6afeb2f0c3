import unittest

from specconf_adapter import Output, Request, TraceBuilder, emit_cut, greedy_accept

from .helpers import request_message


def builder(num_steps=3, requests=None):
    return TraceBuilder(Request.from_json(request_message(num_steps, requests=requests)), "test-engine", "1.0")


class GreedyAcceptTest(unittest.TestCase):
    def test_chain_accepts_while_each_draft_is_its_parents_predict(self):
        # root x_L = 10; drafts 11 12 13; the target predicts 11 after the root, 12 after 11, 99 after 12
        acceptance = greedy_accept([10, 11, 12, 13], [11, 12, 99, 7])
        self.assertEqual(acceptance.path, (0, 1, 2))
        self.assertEqual(acceptance.accept_len, 3)
        self.assertEqual(acceptance.accept_tokens, (11, 12, 99))
        self.assertEqual(acceptance.bonus, 99)

    def test_rejected_first_draft_keeps_the_root_only(self):
        acceptance = greedy_accept([10, 11, 12], [30, 12, 13])
        self.assertEqual((acceptance.accept_len, acceptance.bonus), (1, 30))

    def test_tree_walks_the_child_carrying_the_parents_predict(self):
        # root 0 has children rows 1 (token 5) and 2 (token 6); row 3 (token 8) is row 2's child
        acceptance = greedy_accept([4, 5, 6, 8], [6, 0, 8, 9], parents=[-1, 0, 0, 2])
        self.assertEqual(acceptance.path, (0, 2, 3))
        self.assertEqual(acceptance.bonus, 9)

    def test_mismatched_lengths_are_refused(self):
        with self.assertRaises(ValueError):
            greedy_accept([1, 2], [3])


class EmitCutTest(unittest.TestCase):
    def test_cut_after_the_first_stop_id_which_is_kept(self):
        self.assertEqual(emit_cut((4, 2, 5), stop_ids=[2]), ((4, 2), True))

    def test_cut_at_the_cap(self):
        self.assertEqual(emit_cut((4, 5, 6), max_emit=2), ((4, 5), True))

    def test_nothing_cut(self):
        self.assertEqual(emit_cut((4, 5, 6), max_emit=5, stop_ids=[2]), ((4, 5, 6), False))


class DraftRowTest(unittest.TestCase):
    def test_draft_rows_sit_at_their_anchor_and_bos_has_none(self):
        trace = builder()
        trace.event("prefill").target_rows(0, [1, 5, 9, 40], 0, [7, 7, 7, 33])
        refs = trace.event("draft-extend").draft_rows(0, [1, 5, 9, 40, 33], 0, [0, 0, 0, 0, 21])
        rows = trace.build([])["events"][1]["rows"]
        self.assertEqual([(row["token"], row["position"]) for row in rows], [(5, 0), (9, 1), (40, 2), (33, 3)])
        self.assertEqual(len(refs), 4)
        self.assertTrue(all(row["temporary"] is False for row in rows))
        self.assertNotIn("hidden", rows[0])  # a standalone draft model takes no hidden state

    def test_eagle_rows_take_the_target_row_at_their_anchor(self):
        trace = builder()
        trace.event("prefill").target_rows(0, [1, 5, 9], 0, [4, 4, 4])
        trace.event("draft-extend").draft_rows(0, [5, 9, 4], 1, hidden="target")
        rows = trace.build([])["events"][1]["rows"]
        self.assertEqual([row["hidden"] for row in rows], [{"event": 0, "row": i} for i in range(3)])

    def test_draft_decode_is_temporary_and_continues_the_previous_draft_row(self):
        trace = builder()
        trace.event("prefill").target_rows(0, [1, 5, 9], 0)
        trace.event("draft-extend").draft_rows(0, [5, 9, 4], 1, [0, 0, 21])
        trace.event("draft-decode", draft_step=1).draft_rows(0, [21], 4, [22], hidden="draft")
        trace.event("draft-decode", draft_step=2).draft_rows(0, [22], 5, [23], hidden="draft")
        events = trace.build([])["events"]
        first, second = events[2]["rows"][0], events[3]["rows"][0]
        self.assertEqual((first["position"], first["temporary"], first["hidden"]), (3, True, {"event": 1, "row": 2}))
        self.assertEqual((second["position"], second["hidden"]), (4, {"event": 2, "row": 0}))
        self.assertEqual(events[2]["draftStep"], 1)

    def test_hidden_target_without_a_target_row_is_an_error(self):
        trace = builder()
        with self.assertRaisesRegex(ValueError, "no target row at position 3"):
            trace.event("draft-extend").draft_rows(0, [9], 4, hidden="target")


class VerifyTest(unittest.TestCase):
    def two_requests(self, num_steps=3):
        return builder(num_steps=num_steps, requests=[
            {"id": 0, "prompt": [1, 5, 9], "maxNewTokens": 8, "arrivalStep": 0},
            {"id": 1, "prompt": [1, 5, 9], "maxNewTokens": 8, "arrivalStep": 0},
        ])

    def test_verify_rows_and_the_engines_result_follow_the_conventions(self):
        trace = self.two_requests()
        event = trace.event("verify")
        event.verify(0, [4, 11, 12, 13], 3, [11, 12, 50, 51], accept_len=3, bonus=50, emitted=[11, 12, 50],
                     accept_index=[0, 1, 2, -1], accept_tokens=[11, 12, 50, -1], finished=False)
        # the path convenience flattens with the request's block: its second block starts at N = 4
        second = event.verify(1, [4, 11, 12, 13], 3, [11, 2, 50, 51], accept_len=2, bonus=2, emitted=[11, 2],
                              path=[0, 1], finished=True)
        built = trace.build([Output(0, [4, 11, 12, 50]), Output(1, [4, 11, 2], "eos")])
        verify = built["events"][0]["verify"]
        self.assertEqual(verify[0], {"request": 0, "acceptIndex": [0, 1, 2, -1], "acceptLen": 3,
                                     "acceptTokens": [11, 12, 50, -1], "bonus": 50, "emitted": [11, 12, 50],
                                     "finished": False})
        self.assertEqual(verify[1]["acceptIndex"], [4, 5, -1, -1])
        self.assertEqual(second, verify[1])
        self.assertNotIn("acceptTokens", verify[1])  # not given: left out, never invented
        rows = built["events"][0]["rows"]
        self.assertEqual([row["position"] for row in rows[:4]], [3, 4, 5, 6])
        self.assertEqual([row["parent"] for row in rows[:4]], [-1, 0, 1, 2])
        self.assertEqual([row["candidate"] for row in rows[:4]], [0, 1, 2, 3])
        self.assertTrue(all(row["temporary"] for row in rows))

    def test_what_the_engine_did_is_recorded_even_where_it_is_wrong(self):
        # A bonus from the wrong row and an index outside the request's block: recorded as given, so the trace
        # laws (bonus stride) can see them; greedy_accept would have said bonus 50, path (0, 1, 2).
        trace = self.two_requests()
        result = trace.event("verify").verify(0, [4, 11, 12, 13], 3, [11, 12, 50, 51], accept_len=3, bonus=12,
                                              emitted=[11, 12, 12], accept_index=[0, 1, 6, -1])
        self.assertEqual((result["bonus"], result["emitted"], result["acceptIndex"]), (12, [11, 12, 12], [0, 1, 6, -1]))
        self.assertNotIn("finished", result)
        self.assertEqual(greedy_accept([4, 11, 12, 13], [11, 12, 50, 51]).bonus, 50)

    def test_tree_rows_sit_at_root_plus_depth(self):
        trace = builder(num_steps=2)
        trace.event("verify").verify(0, [4, 5, 6, 8], 3, [6, 0, 8, 9], parents=[-1, 0, 0, 2], candidates=[0, 1, 2, 4],
                                     accept_len=3, bonus=9, emitted=[6, 8, 9], path=[0, 2, 3])
        built = trace.build([])["events"][0]
        self.assertEqual([row["position"] for row in built["rows"]], [3, 4, 4, 5])
        self.assertEqual([row["candidate"] for row in built["rows"]], [0, 1, 2, 4])
        self.assertEqual(built["verify"][0]["acceptIndex"], [0, 2, 3])

    def test_the_engines_values_are_required_and_checked(self):
        event = builder().event("verify")
        with self.assertRaises(TypeError):
            event.verify(0, [4, 5], 3, [5, 6])  # accept_len, bonus, emitted: the engine's, no default
        with self.assertRaisesRegex(ValueError, "exactly one of accept_index"):
            event.verify(0, [4, 5], 3, [5, 6], accept_len=2, bonus=6, emitted=[5, 6])
        with self.assertRaisesRegex(ValueError, r"accept_len: 0 is not an integer >= 1"):
            event.verify(0, [4, 5], 3, [5, 6], accept_len=0, bonus=6, emitted=[5, 6], path=[0])
        with self.assertRaisesRegex(ValueError, r"emitted\[1\]: -3"):
            event.verify(0, [4, 5], 3, [5, 6], accept_len=2, bonus=6, emitted=[5, -3], path=[0, 1])
        with self.assertRaisesRegex(ValueError, "predicts: 1 values for 2 rows"):
            event.verify(0, [4, 5], 3, [5], accept_len=2, bonus=6, emitted=[5, 6], path=[0, 1])

    def test_a_verify_row_outside_a_verify_event_is_refused(self):
        with self.assertRaises(ValueError):
            builder().event("prefill").verify(0, [4], 3, [5], accept_len=1, bonus=5, emitted=[5], path=[0])


class TreeDraftRowTest(unittest.TestCase):
    def test_draft_rows_carry_the_engines_candidates_children_and_child_margins(self):
        trace = builder(num_steps=2)
        trace.event("prefill").target_rows(0, [1, 5, 9], 0, [7, 7, 7])
        trace.event("draft-extend").draft_rows(0, [5, 9, 7], 1, [0, 0, 7],
                                               children=[None, None, [(1, 7, 0.0), {"number": 2, "token": 1, "score": -3.5}]],
                                               child_margins=[None, None, 0.25])
        trace.event("draft-decode", draft_step=1).draft_rows(0, [7, 1], 3, [52, 7], hidden="draft", candidates=[1, 2],
                                                             children=[[(3, 52, -0.1), (4, 31, -2.0)], [(5, 7, -3.6), (6, 1, -4.0)]])
        events = trace.build([])["events"]
        root = events[1]["rows"][2]
        self.assertEqual(root["children"], [{"number": 1, "token": 7, "score": 0.0}, {"number": 2, "token": 1, "score": -3.5}])
        self.assertEqual(root["childMargin"], 0.25)
        self.assertNotIn("children", events[1]["rows"][0])
        self.assertNotIn("candidate", root)
        decode = events[2]["rows"]
        self.assertEqual([row["candidate"] for row in decode], [1, 2])
        self.assertEqual([row["position"] for row in decode], [2, 3])
        self.assertEqual(decode[1]["children"][0], {"number": 5, "token": 7, "score": -3.6})

    def test_malformed_children_are_refused_naming_the_row_and_field(self):
        event = builder().event("draft-extend")
        with self.assertRaisesRegex(ValueError, r"children\[0\]\[0\].number: 0 is not an integer >= 1"):
            event.draft_rows(0, [5], 1, children=[[(0, 7, 0.0)]])
        with self.assertRaisesRegex(ValueError, r"children\[0\]\[0\]: unknown fields \['logit'\]"):
            event.draft_rows(0, [5], 1, children=[[{"number": 1, "token": 7, "score": 0.0, "logit": 3}]])
        with self.assertRaisesRegex(ValueError, "candidates: 2 values for 1 rows"):
            event.draft_rows(0, [5], 1, candidates=[1, 2])


class BuildTest(unittest.TestCase):
    def test_header_requests_and_numbering(self):
        trace = builder()
        trace.event("prefill").target_rows(0, [1, 5, 9, 40], 0)
        trace.event("decode").target_rows(0, [33], 4, [12])
        built = trace.build([Output(0, [33, 12], "length")])
        self.assertEqual(built["formatVersion"], 1)
        self.assertEqual(built["engine"], {"name": "test-engine", "dtype": "float32", "version": "1.0"})
        self.assertEqual(built["models"], {"target": "a" * 64, "draft": ["b" * 64]})
        self.assertEqual(built["config"]["numSteps"], 3)
        self.assertEqual(built["config"]["draft"]["kind"], "mirror")
        self.assertEqual(built["requests"], [{"id": 0, "prompt": [1, 5, 9, 40], "output": [33, 12], "finishReason": "length"}])
        self.assertEqual([event["index"] for event in built["events"]], [0, 1])
        self.assertEqual(built["events"][1]["rows"], [{"request": 0, "token": 33, "position": 4, "predict": 12}])

    def test_requests_carry_the_slot_they_ran_on_when_given(self):
        built = builder().build([Output(0, [33], "length")], slots={0: 1})
        self.assertEqual(built["requests"][0]["slot"], 1)
        self.assertNotIn("slot", builder().build([Output(0, [33], "length")])["requests"][0])

    def test_requests_carry_the_outputs_text_fields_and_stop_fields(self):
        output = Output(0, [33, 12], "stop", stop_token_id=12, finished_length=2, text="ab", stop_string="c",
                        deltas=[{"text": "a", "tokens": [33]}, {"text": "b", "tokens": [12]}],
                        usage={"promptTokens": 4, "completionTokens": 2},
                        logprobs=[{"token": 33, "logprob": -0.5}, {"token": 12, "logprob": -0.1}],
                        accept_lens=[2])
        entry = builder().build([output])["requests"][0]
        self.assertEqual(entry, {"id": 0, "prompt": [1, 5, 9, 40], "output": [33, 12], "finishReason": "stop",
                                 "stopTokenId": 12, "finishedLength": 2,
                                 "logprobs": [{"token": 33, "logprob": -0.5}, {"token": 12, "logprob": -0.1}],
                                 "text": "ab", "stopString": "c",
                                 "deltas": [{"text": "a", "tokens": [33]}, {"text": "b", "tokens": [12]}],
                                 "usage": {"promptTokens": 4, "completionTokens": 2}})
        # accept lens are an output's, not a trace request's; fields an output lacks stay out
        self.assertEqual(set(builder().build([Output(0, [33], "length")])["requests"][0]),
                         {"id", "prompt", "output", "finishReason"})

    def test_unknown_phase_is_refused(self):
        with self.assertRaises(ValueError):
            builder().event("extend")


if __name__ == "__main__":
    unittest.main()
