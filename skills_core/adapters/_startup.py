"""What a serving process says about its catalog once it is loaded, on stderr for the operator.

Shared by ``skills-core serve`` over stdio (after :class:`~skills_core.adapters.loading.LoadingServer`
has loaded) and by each HTTP worker (after :meth:`SkillsApp.loading
<skills_core.adapters.asgi.SkillsApp.loading>` has loaded): both load in a thread while the
handshake and the probes are answered, so what follows a load is said from that thread, once the
catalog is served. Sizing the listing reads every listed entry once (below the entry cap; past
it the count alone says it); it runs after the catalog is published, so it never delays
readiness. :func:`say_in_log` writes a worker's lines, in the log's format when the log is
configured.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server.catalog import Catalog

__all__ = ["report_catalog", "default_host_overflow", "say_in_log"]


def default_host_overflow(catalog: Catalog) -> str | None:
    """What a host with the default policy would not read whole of ``catalog``'s listing (the
    entry cap, the manifest rows, the listing bytes, counted as the host counts them), or None."""
    from ..host.budgets import listing_overflow  # noqa: PLC0415 - only once loaded
    from ..host.policy import HostPolicy  # noqa: PLC0415

    policy = HostPolicy()
    listed = [skill for skill in catalog.skills if skill.listed]
    if len(listed) > policy.max_entries:
        # The entry cap is the first budget a host counts: past it, nothing need be decoded (a
        # large catalog would otherwise be decoded whole while the first pages are served).
        return f"{len(listed):,} entries, over the {policy.max_entries:,} of HostPolicy.max_entries"
    return listing_overflow(
        (
            json.loads(skill.encoded_entry)
            if skill.encoded_entry is not None
            else skill.entry.to_json()
            for skill in listed
        ),
        policy,
    )


def report_catalog(catalog: Catalog, say: Callable[[str, str], None]) -> None:
    """Say (``say(level, message)``) how many skill folders were left out, and whether a host
    with the default policy would read only part of the listing."""
    if catalog.omitted:
        say(
            "warning",
            f"{len(catalog.omitted)} skill folder(s) left out; `skills-core manifest` says why",
        )
    overflow = default_host_overflow(catalog)
    if overflow is not None:
        say(
            "warning",
            f"warning: the listing holds {overflow}: a host with the default policy "
            "(skills-core host, and hosts built on this library) reads only part of it, and says "
            "so; its users can raise the cap (skills-core host --max-entries, "
            "--max-listed-resources, --max-listing-bytes)",
        )


def say_in_log(level: str, message: str) -> None:
    """A worker's line about the catalog it loaded, on stderr, every character made visible: in
    the log's format when the log is configured, else as a plain line."""
    from ._asgi_observe import log_event, logging_configured  # noqa: PLC0415 - HTTP only

    if logging_configured():
        log_event(level, "catalog", message)
        return
    from ..display import display  # noqa: PLC0415

    sys.stderr.write(f"skills-core: serve: {display(message)}\n")
    sys.stderr.flush()
