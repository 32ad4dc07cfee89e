"""A host in one process that loads skills from ``skills-core serve`` over stdio, verified.

Usage::

    python3 examples/host_over_stdio.py [FOLDER] [--skill NAME] [--yes] [--timeout SECONDS]

It spawns ``python -m skills_core serve FOLDER`` with the asyncio stdio adapter (without FOLDER,
the spec's example skill ``pdf-processing`` is written to a temporary folder and served), opens
the connection the way stdio wants (``skills_core.host.driver.handshake``: ``server/discover``,
falling back to ``initialize``), lists the server's skills, resolves ``--skill NAME`` (or takes
the first listed), loads it, and prints its SKILL.md as the model receives it, every byte
verified against the manifest you approved. The client is itself the pump's requester:
``sc.pump_async(host, effects, {LABEL: client})``, each request waiting up to ``--timeout``.

Every effect is handled as it comes, by the pump's ``on_effect`` callback and by family: an
approval prompt shows the manifest and asks on the terminal, or approves with ``--yes`` (without a
terminal and without ``--yes``, it declines); a problem is a note on stderr; the verified delivery
is kept for printing. Everything the server sent (names, descriptions, the SKILL.md, its stderr)
is shown through ``skills_core.display``. Standard library only.

Exit status: 0 once the SKILL.md is printed; 1 when no skill matches or it was not loaded (you
declined, or it failed verification); 2 when the server did not start, answer or keep to JSON-RPC.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import skills_core as sc
from skills_core import spec_examples as ex
from skills_core.adapters.asyncio_stdio import open_stdio_client
from skills_core.display import display, display_line
from skills_core.host import DeliverToModel, Effect, Problem, RequestApproval
from skills_core.host.driver import handshake
from skills_core.host.pump import Pumped

LABEL = "docs"


class Session:
    """One run: the host, how approvals are answered, and the verified SKILL.md once it came."""

    def __init__(self, *, yes: bool) -> None:
        self.host = sc.Host()  # default policy: fails closed (no dynamic skills, no prefetch)
        self.yes = yes
        self.skill_md: DeliverToModel | None = None

    async def on_effect(self, item: Pumped) -> list[Effect] | None:
        """The pump's callback: each effect (or transport failure) as it comes, by family."""
        if isinstance(item, sc.TransportFailure):
            raise item.error  # the server is gone or broke JSON-RPC: exit status 2
        if isinstance(item, RequestApproval):
            return await self.answer(item)
        if isinstance(item, Problem):
            print(f"note: {display_line(item.message, 300)}", file=sys.stderr)
        elif isinstance(item, DeliverToModel) and item.verified:
            self.skill_md = item
        return None

    async def answer(self, prompt: RequestApproval) -> list[Effect]:
        """Show the manifest; approve with --yes or when the user says so on a terminal."""
        print(f"approval needed: {display(prompt.message)}")
        if prompt.manifest != "dynamic":
            for resource in prompt.manifest:
                print(f"    {resource.size:>8}  {resource.digest}  {display_line(resource.uri)}")
        if self.yes:
            print("    approved (--yes)")
            return self.host.approve(prompt.prompt_id)
        if not sys.stdin.isatty():
            print("not a terminal: pass --yes to approve", file=sys.stderr)
        elif (await asyncio.to_thread(input, "approve this manifest? [y/N] ")).lower() in (
            "y",
            "yes",
        ):
            return self.host.approve(prompt.prompt_id)
        return self.host.deny(prompt.prompt_id)


async def run(folder: Path, skill: str | None, yes: bool, timeout: float) -> int:
    """Spawn the server on ``folder``, handshake, list, load and print; return the exit status."""
    command = [sys.executable, "-m", "skills_core", "serve", str(folder)]
    session = Session(yes=yes)
    host = session.host
    try:
        async with open_stdio_client(command, label=LABEL, timeout=timeout) as client:
            for effect in await handshake(host, LABEL, client, timeout=timeout):
                print(display(effect.message))
            send = {LABEL: client}
            await sc.pump_async(host, host.list_skills(LABEL), send, on_effect=session.on_effect)
            for item in host.catalog(LABEL):
                print(f"skill: {display_line(item.qualified)}: {display_line(item.description)}")
            found = host.resolve(skill) if skill is not None else None
            uri = (
                found.uri if found is not None else next((i.uri for i in host.catalog(LABEL)), None)
            )
            if uri is None:
                why = found.message if found is not None else "the server lists no skills"
                print(display_line(why, 300), file=sys.stderr)
                return 1
            await sc.pump_async(host, host.load(LABEL, uri), send, on_effect=session.on_effect)
    except (sc.TransportError, sc.JsonRpcError) as exc:
        print(f"error: {display_line(str(exc), 300)}", file=sys.stderr)
        return 2
    if session.skill_md is None:
        return 1  # declined or not verified: a note said why
    print(f"verified: {len(session.skill_md.content)} bytes, as the approved manifest says")
    for line in session.skill_md.model_text.splitlines():
        print(display(line))
    return 0


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
