#!/usr/bin/env python3
"""Send several /completion requests to llama-server released together (the findings' concurrent reproducers).

Each request gets its own connection, opened first; a barrier then releases every thread, and each sends its whole
request at once. So the server receives all of them within microseconds, and none waits for another's reply, which
`curl B & curl A` does not ensure (the shell may start the second curl after the first request was already
prefilled). What the server then batches is its own choice: its loop (server_queue::start_loop) takes every task
queued before it runs update_slots, so requests that arrive while it is idle land in one batch unless a wake-up
falls between two posts; the findings say which of their effects need that and how often it was seen.

  python3 scripts/llama-server/send-together.py [--port 8080] BODY.json... ('-' or a JSON text also work)

Prints each reply as one JSON line, in the order of the arguments. Standard library only.
"""

import argparse
import http.client
import json
import sys
import threading


def body_of(argument: str) -> str:
    if argument == "-":
        return sys.stdin.read()
    if argument.lstrip().startswith("{"):
        return argument
    with open(argument, encoding="utf-8") as handle:
        return handle.read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("bodies", nargs="+")
    args = parser.parse_args()
    bodies = [body_of(argument).encode("utf-8") for argument in args.bodies]
    for index, body in enumerate(bodies):
        json.loads(body)  # a malformed body fails here, before anything is sent
    barrier = threading.Barrier(len(bodies))
    replies: list = [None] * len(bodies)

    def send(index: int) -> None:
        connection = http.client.HTTPConnection(args.host, args.port, timeout=args.timeout)
        try:
            connection.connect()
            barrier.wait()
            connection.request("POST", "/completion", bodies[index], {"Content-Type": "application/json"})
            response = connection.getresponse()
            replies[index] = response.read().decode("utf-8")
        except Exception as error:  # reported in order with the others, never lost
            replies[index] = json.dumps({"error": f"{type(error).__name__}: {error}"})
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for reply in replies:
        try:
            sys.stdout.write(json.dumps(json.loads(reply)) + "\n")
        except ValueError:
            sys.stdout.write(json.dumps({"error": "not JSON", "reply": reply}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
