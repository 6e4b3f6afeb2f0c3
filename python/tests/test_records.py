import unittest

from specconf_adapter import Output, Request

from .helpers import request_message


class RequestTest(unittest.TestCase):
    def test_the_case_is_read_into_typed_records(self):
        request = Request.from_json(request_message(num_steps=4))
        case = request.case
        self.assertEqual((case.model.vocab, case.model.bos_id, case.model.eos_id, case.model.dtype), (64, 1, 2, "float32"))
        self.assertEqual((case.engine.num_steps, case.engine.topk, case.engine.num_draft_tokens), (4, 1, 5))
        self.assertTrue(case.engine.speculative)
        self.assertEqual(case.draft.kind, "mirror")
        self.assertEqual(case.requests[0].prompt, (1, 5, 9, 40))
        self.assertEqual(case.requests[0].max_new_tokens, 6)
        self.assertEqual(case.engine.raw["poolSlots"], 4096)  # unnamed fields stay readable
        self.assertTrue(request.want_trace)

    def test_model_files_of_a_declared_format(self):
        request = Request.from_json(request_message())
        self.assertEqual(request.model_files("hf").target, "/m/target")
        self.assertEqual(request.model_files("hf").draft, "/m/draft")
        with self.assertRaisesRegex(KeyError, "/models/files/gguf"):
            request.model_files("gguf")

    def test_a_target_only_case_without_draft_files(self):
        request = Request.from_json(request_message(mode="target-only", files={"hf": {"target": "/m/t"}}))
        self.assertFalse(request.case.engine.speculative)
        self.assertIsNone(request.model_files("hf").draft)


class OutputTest(unittest.TestCase):
    def test_wire_form_leaves_unset_fields_out(self):
        self.assertEqual(Output(3, (7, 8)).to_json(), {"id": 3, "tokens": [7, 8]})
        full = Output(3, [7, 2], "stop", stop_token_id=2, finished_length=2, accept_lens=[2], first_round_drafts=[7, 9])
        self.assertEqual(full.to_json(), {"id": 3, "tokens": [7, 2], "finishReason": "stop", "stopTokenId": 2,
                                          "finishedLength": 2, "acceptLens": [2], "firstRoundDrafts": [7, 9]})


if __name__ == "__main__":
    unittest.main()
