import io
import json
import sys
import unittest

from specconf_adapter import Capabilities, Engine, Output, Result, Unsupported, serve

from .helpers import request_message

HELLO = {"protocol": "specconf-engine", "version": 2, "hello": {"specconf": "0.1.0", "modelFormats": ["onnx", "hf"]}}


class EchoEngine(Engine):
    """Returns each prompt's last token as output; prompts starting with 99 are unsupported, 98 crash."""

    name, version = "echo", "2.0"
    capabilities = Capabilities(drafts=("mirror",), max_batch=4, observes=("acceptLens",))

    def run(self, request):
        first = request.case.requests[0].prompt[0]
        if first == 99:
            raise Unsupported("prompts starting with 99")
        if first == 98:
            raise RuntimeError("device lost")
        print("a stray log line")  # must not reach the protocol's stdout
        return Result([Output(r.id, [r.prompt[-1]], "length", accept_lens=[1]) for r in request.case.requests])


def exchange(*messages):
    stdin = io.StringIO("".join(json.dumps(m) + "\n" for m in messages) + "\n")
    stdout = io.StringIO()
    stderr, sys.stderr = sys.stderr, io.StringIO()
    try:
        serve(EchoEngine(), stdin, stdout)
        logged = sys.stderr.getvalue()
    finally:
        sys.stderr = stderr
    return [json.loads(line) for line in stdout.getvalue().splitlines()], logged


class ServeTest(unittest.TestCase):
    def test_hello_answers_name_version_and_capabilities(self):
        (answer,), _ = exchange(HELLO)
        self.assertEqual(answer["hello"]["name"], "echo")
        self.assertEqual(answer["hello"]["version"], "2.0")
        self.assertEqual(answer["hello"]["capabilities"]["maxBatch"], 4)

    def test_a_request_is_answered_with_its_id_and_outputs_and_prints_go_to_stderr(self):
        answers, logged = exchange(HELLO, request_message(request_id=3))
        self.assertEqual(answers[1], {"requestId": 3, "outputs": [{"id": 0, "tokens": [40], "finishReason": "length", "acceptLens": [1]}]})
        self.assertIn("a stray log line", logged)

    def test_unsupported_skips_and_an_exception_fails_one_case_and_the_loop_goes_on(self):
        unsupported = request_message(request_id=4, requests=[{"id": 0, "prompt": [99, 1], "maxNewTokens": 2, "arrivalStep": 0}])
        crash = request_message(request_id=5, requests=[{"id": 0, "prompt": [98, 1], "maxNewTokens": 2, "arrivalStep": 0}])
        answers, logged = exchange(HELLO, unsupported, crash, request_message(request_id=6))
        self.assertEqual(answers[1], {"requestId": 4, "error": "prompts starting with 99", "unsupported": True})
        self.assertEqual(answers[2], {"requestId": 5, "error": "RuntimeError: device lost"})
        self.assertEqual(answers[3]["requestId"], 6)
        self.assertIn("RuntimeError: device lost", logged)  # the traceback, for the engine's developer

    def test_a_wrong_protocol_version_is_answered_with_an_error(self):
        (answer,), _ = exchange({**HELLO, "version": 1})
        self.assertIn("version 2", answer["error"])

    def test_a_missing_case_field_names_its_json_path(self):
        message = request_message(request_id=8)
        del message["case"]["engine"]["numSteps"]
        (_, answer), _ = exchange(HELLO, message)
        self.assertEqual(answer["requestId"], 8)
        self.assertIn("/case/engine/numSteps", answer["error"])


class CapabilitiesTest(unittest.TestCase):
    def test_wire_names_are_camel_case_and_unset_fields_are_left_out(self):
        capabilities = Capabilities(modes=("speculative",), drafts=("eagle", "ngram"), model_formats=("hf",), max_num_steps=5,
                                    page_sizes=(1, 16), chunked_prefill=True, observes=("trace",))
        self.assertEqual(capabilities.to_json(), {
            "modes": ["speculative"], "drafts": ["eagle", "ngram"], "modelFormats": ["hf"], "maxNumSteps": 5,
            "chunkedPrefill": True, "pageSizes": [1, 16], "observes": ["trace"],
        })

    def test_the_dimension_capabilities_have_their_wire_names(self):
        capabilities = Capabilities(draft_schedule=True, context_limits=True, request_slots=True)
        self.assertEqual({key: value for key, value in capabilities.to_json().items() if value is True},
                         {"draftSchedule": True, "contextLimits": True, "requestSlots": True})

    def test_bad_values_are_refused_naming_the_field(self):
        with self.assertRaisesRegex(ValueError, "capabilities.modes"):
            Capabilities(modes=("beam",))
        with self.assertRaisesRegex(ValueError, "capabilities.model_formats"):
            Capabilities(model_formats=("pt",))
        with self.assertRaisesRegex(ValueError, "capabilities.max_topk"):
            Capabilities(max_topk=0)


if __name__ == "__main__":
    unittest.main()
