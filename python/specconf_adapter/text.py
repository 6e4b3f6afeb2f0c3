"""The text layer (docs/laws.md, "The text layer"): detokenizing with the request's vocabulary and stop strings.

A request with `sampling["stop"]` (even empty) is detokenized: its text is its output tokens' texts concatenated
(`Request.vocabulary`, "" for BOS and EOS). The first occurrence of any stop string (the one ending first; of two
ending at one character the longer; only occurrences ending in output token `minNewTokens` or later count) ends
the request: its text ends where the occurrence starts (or ends, with `includeStopStrInOutput`), its tokens with
the token holding the occurrence's last character. An engine that stops on token ids only can apply the stop
strings afterwards with `apply_stop_strings`; one that streams reports one `delta` per step (`Output.deltas`).
"""


def detokenize(vocabulary, tokens):
    """The text of a token sequence: its tokens' texts concatenated (control tokens add nothing)."""
    return "".join(vocabulary[token] for token in tokens)


def first_stop(vocabulary, tokens, stops, min_new_tokens=0):
    """The first stop-string occurrence in the tokens' text: (stop, start, end, token_index), or None."""
    text = ""
    ends = []
    for token in tokens:
        text += vocabulary[token]
        ends.append(len(text))
    after = ends[min(min_new_tokens, len(ends)) - 1] if min_new_tokens > 0 and ends else 0
    best = None
    for stop in stops:
        start = text.find(stop, max(0, after + 1 - len(stop)))
        if start < 0:
            continue
        end = start + len(stop)
        if best is None or end < best[2] or (end == best[2] and start < best[1]):
            best = (stop, start, end)
    if best is None:
        return None
    token_index = next(i for i, token_end in enumerate(ends) if token_end >= best[2])
    return best + (token_index,)


def apply_stop_strings(vocabulary, tokens, sampling):
    """(tokens, text, stop_string) of an output after its request's stop strings: cut at the first occurrence."""
    sampling = sampling or {}
    found = first_stop(vocabulary, tokens, sampling.get("stop", []), sampling.get("minNewTokens", 0))
    if found is None:
        return list(tokens), detokenize(vocabulary, tokens), None
    stop, start, end, token_index = found
    kept = list(tokens[: token_index + 1])
    text = detokenize(vocabulary, kept)[: end if sampling.get("includeStopStrInOutput") else start]
    return kept, text, stop
