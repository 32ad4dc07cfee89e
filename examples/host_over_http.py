"""A host that loads a skill from an MCP server over Streamable HTTP, asking you before it does.

Usage::

    python3 examples/host_over_http.py [URL] [--yes] [--skill NAME] [--header 'NAME: VALUE']
    skills-core serve --http 8000 ./skills &
    python3 examples/host_over_http.py http://127.0.0.1:8000/mcp

With a URL, it starts nothing: it connects to that MCP endpoint (``--header`` adds one, e.g. an
``Authorization``), settles the era the way HTTP signals it (``server/discover``, falling back to
``initialize``), lists the server's skills, and loads one (``--skill``, else the first listed).
Before anything of the skill is read the host asks for approval: this example shows the manifest
(every file, its size and digest) and asks you, or approves on your behalf with ``--yes``. Every
byte is then verified against the entry, and the SKILL.md is printed as the model would receive it.
Everything the server sent is shown through ``skills_core.display``, so no server can put control
sequences on your terminal.

Without a URL, it serves the specification's example skill (``pdf-processing``) itself first, with
the library's ASGI app under uvicorn on a free loopback port, and connects to that.

The HTTP client is the pump's ``send``: ``sc.pump_async(host, effects, {label: client})``. Needs
``pip install httpx2 anyio`` (and ``uvicorn`` to serve in-process), or, for an installed
skills-core, ``pip install 'skills-core[http-client,http]'``.

Exit status: 0 when the skill was loaded and printed; 1 when there is nothing to load or the load
failed (declined, not verified); 2 when the server could not be reached or broke off.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
import anyio.to_thread

import skills_core as sc
from skills_core.adapters.http_client import HttpClient, open_http_client
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

LABEL = "docs"


async def ask(host: sc.Host, item: Pumped, *, yes: bool) -> list[Effect] | None:
    """The pump's ``on_effect``: show each approval prompt and ask; ignore everything else."""
    if not isinstance(item, RequestApproval):
        return None
    print(f"load skill {display_line(item.name)} from {item.origin!r}? ({item.total_size} bytes)")
    if item.manifest != "dynamic":
        for resource in item.manifest:
            print(f"    {resource.size:>8}  {resource.digest}  {display_line(resource.uri)}")
    if yes:
        print("    approved (--yes)")
        return host.approve(item.prompt_id)
    try:  # read the answer off the event loop, which keeps the connection alive meanwhile
        answer = await anyio.to_thread.run_sync(input, "approve? [y/N] ")
    except EOFError:  # nobody to ask: no
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return host.approve(item.prompt_id)
    return host.deny(item.prompt_id)


async def load(client: HttpClient, skill: str | None, *, yes: bool) -> int:
    """Connect, list, load one skill, print it; return the exit status."""
    host = sc.Host()  # default policy: fails closed (no dynamic skills, nothing prefetched)
    senders = {LABEL: client}
    found = await client.negotiate(client_info=host.client_info, timeout=client.timeout)
    connected = host.connect(
        LABEL, found.capabilities, era=found.era, protocol_version=found.protocol_version
    )
    print(f"connected: {found.protocol_version} ({found.era.value})")
    for item in await sc.pump_async(host, [*connected, *host.list_skills(LABEL)], senders):
        if isinstance(item, sc.TransportFailure):
            raise item.error
        if isinstance(item, Refused | RequestFailed | ListingPartial | EntryRejected):
            why = item.error if isinstance(item, EntryRejected) else item.message
            print(f"note: {display_line(str(why), 300)}", file=sys.stderr)
    catalog = host.catalog(LABEL)
    for entry in catalog:
        print(f"skill: {display_line(entry.qualified)}: {display_line(entry.description)}")
    chosen = [e for e in catalog if skill is None or e.name == skill][:1]
    if not chosen:
        print(f"the server lists no skill {skill or ''}".rstrip(), file=sys.stderr)
        return 1

    async def on_effect(item: Pumped) -> list[Effect] | None:
        return await ask(host, item, yes=yes)

    done = await sc.pump_async(host, host.load(LABEL, chosen[0].uri), senders, on_effect=on_effect)
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


async def connect_and_load(url: str, args: argparse.Namespace) -> int:
    """Open the HTTP client for ``url`` and load; a dead or broken server is exit status 2."""
    headers = [(n.strip(), v.strip()) for n, _, v in (h.partition(":") for h in args.header)]
    try:
        async with open_http_client(
            url,
            label=LABEL,
            headers=headers,
            timeout=args.timeout,
        ) as client:
            return await load(client, args.skill, yes=args.yes)
    except (sc.TransportError, sc.JsonRpcError, sc.LocalProtocolError, ValueError) as exc:
        print(f"error: {display_line(str(exc), 300)}", file=sys.stderr)
        return 2


async def serve_and_load(args: argparse.Namespace) -> int:
    """Serve the spec's example skill in-process under uvicorn, then load from it."""
    import uvicorn  # noqa: PLC0415 - only when serving in-process

    from skills_core import spec_examples as ex  # noqa: PLC0415
    from skills_core.adapters.asgi import SkillsApp, derive_key  # noqa: PLC0415

    secret = os.urandom(32)
    files = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}
    server = sc.SkillsServer.from_files(files, cursor_key=derive_key(secret, "cursor"))
    app = SkillsApp(server, session_key=derive_key(secret, "session"))
    web = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    status = 2
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(web.serve)
        try:
            with anyio.fail_after(30):
                while not web.started:
                    await anyio.sleep(0.01)
            port = web.servers[0].sockets[0].getsockname()[1]
            print(f"serving the spec's example skill at http://127.0.0.1:{port}/mcp")
            status = await connect_and_load(f"http://127.0.0.1:{port}/mcp", args)
        finally:
            web.should_exit = True
    return status


def main() -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", nargs="?", help="the MCP endpoint (default: serve one here)")
    parser.add_argument("--yes", action="store_true", help="approve without asking")
    parser.add_argument("--skill", help="the skill to load (default: the first listed)")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="send on every request",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    args = parser.parse_args()
    if any(":" not in h for h in args.header):
        parser.error("--header takes 'NAME: VALUE'")
    if args.url is None:
        return anyio.run(serve_and_load, args)  # uvicorn runs on asyncio
    return anyio.run(connect_and_load, args.url, args)


if __name__ == "__main__":
    sys.exit(main())
