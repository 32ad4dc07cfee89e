"""A host built on the official ``mcp`` SDK that loads MCP-served skills safely through skills_core.

Usage::

    python3 examples/mcp_sdk_host.py [--era auto|modern|legacy] -- COMMAND [ARG...]
    python3 examples/mcp_sdk_host.py -- skills-core serve ./skills

It spawns COMMAND with the SDK's ``stdio_client``, opens a ``ClientSession`` that declares the
Skills extension, connects a :class:`skills_core.Host` to it (``mcp_sdk.connect`` negotiates the
era), lists the server's skills, loads the first one and prints its SKILL.md as the model would
receive it, after every byte was verified against the entry. The approval prompt is answered
through the pump's ``on_effect`` callback: this example shows the manifest and approves it on your
behalf (a real host asks its user). Everything the server sent is shown through
``skills_core.display``. Needs ``pip install 'skills-core[mcp]'``.

Exit status: 0 when a skill was loaded and printed; 1 when there is nothing to load or the load
failed (declined, not verified); 2 when the server could not be reached or broke off.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import anyio
import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client

import skills_core as sc
from skills_core.adapters.mcp_sdk import SessionRequester, client_extensions, connect
from skills_core.display import display, display_line
from skills_core.host import (
    DeliverToModel,
    Effect,
    EntryRejected,
    ListingPartial,
    LoadDeclined,
    LoadFailed,
    Refused,
    RequestApproval,
    RequestFailed,
)
from skills_core.host.pump import Pumped

LABEL = "server"
ERAS = {"auto": None, "modern": sc.Era.MODERN, "legacy": sc.Era.LEGACY}


def approve(host: sc.Host, item: Pumped) -> list[Effect] | None:
    """The pump's ``on_effect``: show each approval prompt and approve it; ignore the rest."""
    if not isinstance(item, RequestApproval):
        return None
    print(f"approve {display_line(item.name)} from {item.origin!r}? ({item.total_size} bytes)")
    if item.manifest != "dynamic":
        for resource in item.manifest:
            print(f"    {resource.size:>8}  {resource.digest}  {display_line(resource.uri)}")
    print("    (this example approves on your behalf)")
    return host.approve(item.prompt_id)


async def run(command: list[str], era: sc.Era | None, timeout: float) -> int:
    """Connect, list, load the first skill, print it; return the exit status."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    host = sc.Host()  # default policy: fails closed (no dynamic skills, nothing prefetched)
    # In the modern era the session stamps its own clientInfo and capabilities on every request.
    client_info = mcp_types.Implementation(name="mcp-sdk-host-example", version="1")
    failure: Exception
    with tempfile.TemporaryFile("w+") as errlog:  # the server's stderr: shown escaped, on failure
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(
                    read,
                    write,
                    read_timeout_seconds=timeout,
                    client_info=client_info,
                    extensions=client_extensions(),
                ) as session,
            ):
                try:
                    await connect(host, LABEL, session, era=era)
                    print(f"connected: {session.protocol_version}")
                    senders = {LABEL: SessionRequester(session, origin=LABEL)}
                    return await list_and_load(host, senders)
                except (sc.TransportError, sc.JsonRpcError) as exc:
                    failure = exc
        except OSError as exc:  # the command could not be started
            failure = exc
        print(f"error: {display_line(str(failure), 300)}", file=sys.stderr)
        errlog.seek(0)
        for line in errlog.read().splitlines()[-5:]:
            print(f"server stderr: {display_line(line, 300)}", file=sys.stderr)
        return 2


async def list_and_load(host: sc.Host, senders: dict[str, SessionRequester]) -> int:
    """List the origin's skills, load the first one, print what the model receives."""
    for item in await sc.pump_async(host, host.list_skills(LABEL), senders):
        if isinstance(item, sc.TransportFailure):
            raise item.error
        if isinstance(item, Refused | RequestFailed | ListingPartial | EntryRejected):
            why = item.error if isinstance(item, EntryRejected) else item.message
            print(f"note: {display_line(str(why), 300)}", file=sys.stderr)
    catalog = host.catalog(LABEL)
    for skill in catalog:
        print(f"skill: {display_line(skill.qualified)}: {display_line(skill.description)}")
    if not catalog:
        print("the server lists no skills", file=sys.stderr)
        return 1
    first = catalog[0]
    done = await sc.pump_async(
        host, host.load(LABEL, first.uri), senders, on_effect=lambda step: approve(host, step)
    )
    for item in done:
        if isinstance(item, sc.TransportFailure):
            raise item.error
        if isinstance(item, LoadDeclined | LoadFailed):
            print(f"not loaded: {display_line(item.message, 300)}", file=sys.stderr)
            return 1
        if isinstance(item, DeliverToModel) and item.verified:
            for line in item.model_text.splitlines():
                print(display(line))
            return 0
    print("nothing was delivered", file=sys.stderr)
    return 1


def main() -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--era", choices=sorted(ERAS), default="auto")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("command", nargs="+", help="the server command, after --")
    args = parser.parse_args()
    return anyio.run(run, args.command, ERAS[args.era], args.timeout)


if __name__ == "__main__":
    sys.exit(main())
