import random
import unittest

from specconf_adapter import Output, Request, apply_stop_strings, detokenize, first_stop

from .helpers import request_message

VOCABULARY = ("", "", "", "a", "b", "ab", "ba", "abb", "bab", "aab")


def brute_force(tokens, stops, min_new_tokens):
    """Every occurrence of every stop string, the one ending first past min new tokens (ties: the longer)."""
    text = detokenize(VOCABULARY, tokens)
    ends = [len(detokenize(VOCABULARY, tokens[: i + 1])) for i in range(len(tokens))]
    after = ends[min(min_new_tokens, len(ends)) - 1] if min_new_tokens > 0 and ends else 0
    found = sorted(
        (start + len(stop), start, stop)
        for stop in stops
        for start in range(len(text))
        if text.startswith(stop, start) and start + len(stop) > after
    )
    if not found:
        return None
    end, start, stop = found[0]
    return stop, start, end, next(i for i, token_end in enumerate(ends) if token_end >= end)


class StopStringsTest(unittest.TestCase):
    def test_first_stop_is_the_occurrence_ending_first(self):
        rng = random.Random(7)
        for _ in range(500):
            tokens = [rng.randrange(len(VOCABULARY)) for _ in range(rng.randrange(1, 9))]
            stops = ["".join(rng.choice("ab") for _ in range(rng.randrange(1, 4))) for _ in range(rng.randrange(0, 3))]
            min_new_tokens = rng.randrange(0, 3)
            self.assertEqual(first_stop(VOCABULARY, tokens, stops, min_new_tokens),
                             brute_force(tokens, stops, min_new_tokens), (tokens, stops, min_new_tokens))

    def test_apply_stop_strings_cuts_tokens_and_text(self):
        # "ab" + "ba" + "a": the stop "bb" spans tokens 0 and 1 and ends inside token 1 ("ba"), which is kept whole.
        self.assertEqual(apply_stop_strings(VOCABULARY, [5, 6, 3], {"stop": ["bb"]}), ([5, 6], "a", "bb"))
        self.assertEqual(apply_stop_strings(VOCABULARY, [5, 6, 3], {"stop": ["bb"], "includeStopStrInOutput": True}),
                         ([5, 6], "abb", "bb"))
        self.assertEqual(apply_stop_strings(VOCABULARY, [5, 6, 3], {"stop": []}), ([5, 6, 3], "abbaa", None))
        # Past min new tokens only: the occurrence ending in token 0 does not count, the one in token 2 does.
        self.assertEqual(apply_stop_strings(VOCABULARY, [5, 4, 5], {"stop": ["ab"], "minNewTokens": 1}),
                         ([5, 4, 5], "abb", "ab"))


class TextRecordsTest(unittest.TestCase):
    def test_the_vocabulary_is_read_when_sent(self):
        self.assertIsNone(Request.from_json(request_message()).vocabulary)
        message = {**request_message(), "vocabulary": list(VOCABULARY)}
        self.assertEqual(Request.from_json(message).vocabulary, VOCABULARY)

    def test_text_fields_on_the_wire(self):
        output = Output(0, [5, 6], "stop", text="a", stop_string="bb", deltas=[{"text": "a", "tokens": [5, 6]}],
                        usage={"promptTokens": 4, "completionTokens": 2})
        self.assertEqual(output.to_json(), {"id": 0, "tokens": [5, 6], "finishReason": "stop", "text": "a",
                                            "stopString": "bb", "deltas": [{"text": "a", "tokens": [5, 6]}],
                                            "usage": {"promptTokens": 4, "completionTokens": 2}})


if __name__ == "__main__":
    unittest.main()
