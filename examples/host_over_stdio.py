"""A host in one process that loads skills from ``skills-core serve`` over stdio, verified.

Usage::

    python3 examples/host_over_stdio.py [FOLDER] [--skill NAME] [--yes] [--timeout SECONDS]

It spawns ``python -m skills_core serve FOLDER`` with the asyncio stdio adapter (without FOLDER,
the spec's example skill ``pdf-processing`` is written to a temporary folder and served), opens
the connection the way stdio wants (``skills_core.host.driver.handshake``: ``server/discover``,
falling back to ``initialize``), lists the server's skills, loads one (``--skill NAME``, or the
first listed) and prints its SKILL.md as the model receives it, every byte verified against the
manifest you approved. The client is itself the pump's requester:
``sc.pump_async(host, effects, {LABEL: client})``, each request waiting up to ``--timeout``.

The approval prompt is answered by the pump's ``on_effect`` callback: it shows the manifest and
asks on the terminal, or approves with ``--yes``; without a terminal and without ``--yes`` it
declines. Everything the server sent (names, descriptions, the SKILL.md, its stderr) is shown
through ``skills_core.display``. Standard library only.

Exit status: 0 when the skill was loaded and printed; 1 when there is nothing to load or the load
failed (declined, not verified); 2 when the server could not be reached or broke off.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import skills_core as sc
from skills_core import spec_examples as ex
from skills_core.adapters.asyncio_stdio import StdioClient, open_stdio_client
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
from skills_core.host.driver import handshake
from skills_core.host.pump import Pumped

LABEL = "docs"


async def approve(host: sc.Host, item: Pumped, *, yes: bool) -> list[Effect] | None:
    """The pump's ``on_effect``: show each approval prompt, then approve or deny it."""
    if not isinstance(item, RequestApproval):
        return None
    print(f"approval needed: {display(item.message)}")
    if item.manifest != "dynamic":
        for resource in item.manifest:
            print(f"    {resource.size:>8}  {resource.digest}  {display_line(resource.uri)}")
    if yes:
        print("    approved (--yes)")
        return host.approve(item.prompt_id)
    if sys.stdin.isatty():
        answer = await asyncio.to_thread(input, "approve this manifest? [y/N] ")
        if answer.strip().lower() in ("y", "yes"):
            return host.approve(item.prompt_id)
    else:
        print("not a terminal: pass --yes to approve", file=sys.stderr)
    return host.deny(item.prompt_id)


async def list_and_load(host: sc.Host, client: StdioClient, skill: str | None, yes: bool) -> int:
    """List the server's skills, load one, print what the model receives; return the status."""
    senders = {LABEL: client}
    for item in await sc.pump_async(host, host.list_skills(LABEL), senders):
        if isinstance(item, sc.TransportFailure):
            raise item.error
        if isinstance(item, Refused | RequestFailed | ListingPartial | EntryRejected):
            why = item.error if isinstance(item, EntryRejected) else item.message
            print(f"note: {display_line(str(why), 300)}", file=sys.stderr)
    catalog = host.catalog(LABEL)
    for listed in catalog:
        print(f"skill: {display_line(listed.qualified)}: {display_line(listed.description)}")
    chosen = [s for s in catalog if skill is None or s.name == skill]
    if not chosen:
        wanted = "no skills" if skill is None else f"no skill named {skill!r}"
        print(f"the server lists {display_line(wanted)}", file=sys.stderr)
        return 1
    done = await sc.pump_async(
        host,
        host.load(LABEL, chosen[0].uri),
        senders,
        on_effect=lambda item: approve(host, item, yes=yes),
    )
    for item in done:
        if isinstance(item, sc.TransportFailure):
            raise item.error
        if isinstance(item, LoadDeclined | LoadFailed):
            print(f"not loaded: {display_line(item.message, 300)}", file=sys.stderr)
            return 1
        if isinstance(item, DeliverToModel) and item.verified:
            print(f"verified: {len(item.content)} bytes, as the approved manifest says")
            for line in item.model_text.splitlines():
                print(display(line))
            return 0
    print("nothing was delivered", file=sys.stderr)
    return 1


async def run(folder: Path, skill: str | None, yes: bool, timeout: float) -> int:
    """Spawn the server on ``folder``, handshake, list and load; return the exit status."""
    command = [sys.executable, "-m", "skills_core", "serve", str(folder)]
    host = sc.Host()  # default policy: fails closed (no dynamic skills, nothing prefetched)
    try:
        async with open_stdio_client(command, label=LABEL, timeout=timeout) as client:
            for effect in await handshake(host, LABEL, client, timeout=timeout):
                print(display(effect.message))
            return await list_and_load(host, client, skill, yes)
    except (sc.TransportError, sc.JsonRpcError) as exc:
        print(f"error: {display_line(str(exc), 300)}", file=sys.stderr)
        return 2


def main() -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", nargs="?", type=Path, help="default: the spec's example skill")
    parser.add_argument("--skill", help="the name of the skill to load (default: the first)")
    parser.add_argument("--yes", action="store_true", help="approve without asking")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    args = parser.parse_args()
    if args.folder is not None:
        return asyncio.run(run(args.folder, args.skill, args.yes, args.timeout))
    with tempfile.TemporaryDirectory(prefix="host-over-stdio-") as tmp:
        folder = Path(tmp) / "skills"
        for path, data in ex.FILES.items():
            target = folder / "pdf-processing" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        print(f"serving the spec's example skill from {display(str(folder))}")
        return asyncio.run(run(folder, args.skill, args.yes, args.timeout))


if __name__ == "__main__":
    sys.exit(main())
