"""A tiny stdio server for adapter tests: echoes params, misbehaves on request.

Usage: python echo_server.py [asyncio|trio]

Methods: ``echo`` (result = params), ``sleep`` (never answers), ``noise`` (writes a non-JSON line to
stdout and text to stderr, then answers), ``die`` (exits at once), ``huge`` (answers with a line
over the size cap set by the client's test), ``ask`` (sends a request to the client first).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from skills_core.jsonrpc import Answer, ErrorObject
from skills_core.jsonvalue import JSONValue


class Echo:
    """A responder (the shape of ServerConnection.answer) that echoes params."""

    def answer(
        self, method: str, params: dict[str, JSONValue] | None, *, defer_reads_over: int | None
    ) -> Answer:
        if method == "echo":
            return {"echo": params or {}}
        if method == "sleep":
            return {"never": True}
        if method == "boom":
            raise RuntimeError("handler bug")
        return ErrorObject(code=-32601, message=f"no {method}")


def main() -> None:
    flavour = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    if flavour == "raw":
        raw()
        return
    if flavour == "trio":
        import trio

        from skills_core.adapters.trio_stdio import serve_stdio as trio_serve

        trio.run(trio_serve, Echo())
    else:
        import asyncio

        from skills_core.adapters.asyncio_stdio import serve_stdio

        asyncio.run(serve_stdio(Echo()))


def raw() -> None:
    """Hand-written misbehaviour for client tests, line by line."""
    import json

    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "sleep" or "id" not in message:
            continue
        if method == "die":
            sys.exit(3)
        if method == "noise":
            sys.stdout.write("this is not json\n")
            sys.stderr.write("a log line on stderr\n")
            sys.stderr.flush()
        if method == "huge":
            sys.stdout.write(
                '{"jsonrpc":"2.0","id":'
                + json.dumps(message["id"])
                + ',"result":{"x":"'
                + "a" * 5000
                + '"}}\n'
            )
            sys.stdout.flush()
            continue
        if method == "ask":
            sys.stdout.write(
                '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}\n'
            )
        sys.stdout.write(
            json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"ok": method}}) + "\n"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
