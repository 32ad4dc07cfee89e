"""A hostile stdio skills server: answers as ours does, and floods change notifications.

Once it has answered the first ``skills/list``, it writes ``COUNT`` (default 100,000)
``notifications/resources/list_changed`` in one burst, and keeps writing them in bursts of 1,000
every 50 ms. Its listings alternate between two catalogs (alpha; alpha and beta), so every re-list
a host makes finds a change. It counts the ``skills/list`` requests it gets and writes the count to
``COUNTFILE`` after each one. Legacy (2025-11-25) only: the host is run with
``--protocol-era legacy``.

    python flood_server.py COUNTFILE [COUNT]
"""

from __future__ import annotations

import json
import os
import select
import sys

from skills_core.server import SkillsServer

FRONT = "---\nname: {0}\ndescription: The {0} skill.\n---\nbody\n"
NOTE = b'{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}\n'


def main() -> None:
    countfile = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    key = b"k" * 32
    one = SkillsServer.from_files(
        {"alpha/SKILL.md": FRONT.format("alpha").encode()}, cursor_key=key
    )
    two = SkillsServer.from_files(
        {
            "alpha/SKILL.md": FRONT.format("alpha").encode(),
            "beta/SKILL.md": FRONT.format("beta").encode(),
        },
        cursor_key=key,
    )
    connections = [one.connection(), two.connection()]
    lists = 0
    flooding = False
    buffer = b""
    out = sys.stdout.buffer
    while True:
        ready, _, _ = select.select([0], [], [], 0.05 if flooding else None)
        if not ready:
            out.write(NOTE * 1000)
            out.flush()
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, _, buffer = buffer.partition(b"\n")
            message = json.loads(line)
            if "id" not in message:
                continue
            method = message.get("method")
            connection = connections[lists % 2]
            if method == "skills/list":
                lists += 1
                with open(countfile, "w") as handle:
                    handle.write(str(lists))
            response = connection.handle(message)
            if method == "initialize":
                for other in connections:
                    other.handle(message)
            if response is not None:
                out.write(json.dumps(response).encode() + b"\n")
            if method == "skills/list" and not flooding:
                out.write(NOTE * count)
                flooding = True
            out.flush()


if __name__ == "__main__":
    main()
