"""The live-server check, sans-IO: which requests to send a skills server, and what its answers break.

Theory of operation
===================

``skills-core check --server`` connects to a server as a host would and checks what it serves as
``validate`` checks a folder. Everything that decides something lives here and does no I/O: the
check is a generator (:func:`check_server`) that yields each request to send (a :class:`Call`) and
takes its answer back as JSON values (a :class:`Reply`), then returns a
:class:`ServerCheckResult`. The command line (:mod:`skills_core.cli.check_server`) carries the
calls over the host's own transports after the host's own handshake; a test drives the same
generator with a function from calls to replies (:func:`run_check`), so every rule here is tested
without a process or a socket.

The walk, in order (each answer is read with the parsers the host uses, :mod:`skills_core.messages`):

1. **Capabilities** (from the handshake): the extension declared as an object (CAP-01),
   ``resources`` beside it (CAP-07), ``directoryRead`` a boolean (CAP-02, SIL-15).
2. **The listing**: every ``skills/list`` page, following ``nextCursor`` (LIST-07): a page that
   fails, a cursor that fails when sent back, a cursor given twice, a skill given twice, the
   ``resultType``, ``ttlMs`` and ``cacheScope`` every modern page carries (LIST-03, LIST-09).
   The entries are then checked by :func:`skills_core.check.validate_entries`: the entry rules a
   host applies and the Agent Skills rules, with the codes ``validate --entries`` gives.
3. **Each skill** with ``skills/get``: answered (GET-03), for the URI asked (GET-06), the same
   entry as listed (ENTRY-01), with its cache fields and no cursor (GET-05, GET-09).
4. **Each listed file** with ``resources/read``: one content item for the URI (VER-17), the size
   and then the digest of its bytes (VER-06, VER-07), and for ``SKILL.md`` its frontmatter
   against the entry's, field by field (ENTRY-04, VER-11). A ``"dynamic"`` skill has only its
   ``SKILL.md`` read, for the frontmatter (VER-10).
5. **Directories**: with ``directoryRead`` declared, every directory of every manifest (and any
   other directory a read lists) is read (CAP-05, DIR-10); a child the manifest lacks is read to
   see whether it is served (ENTRY-08), a manifest file a read omits is reported (DIR-06).
   Without the declaration, one read of a skill's root says whether the method is answered all
   the same (ERR-05).
6. **resources/list**: a ``SKILL.md`` resource with another name or description than its
   frontmatter (FMT-08, FMT-09), a file inside a skill its entry does not list.
7. **Errors**: ``-32602`` for a skill that does not exist (ERR-01), a file that does not exist
   (ERR-03; ``-32002`` is accepted in the legacy era, as 2025-11-25 has it), and a directory
   read of a file (ERR-02).

The cache and result-type fields are 2026-07-28 fields: in the legacy era they are not asked for.

**Bounds.** A hostile server costs bounded time and memory: :class:`CheckBounds` takes a host's
caps (:class:`~skills_core.host.policy.HostPolicy`: entries and listing bytes of a listing, the
per-skill limits, the bytes read from one server, directory pages and entries) plus a few of its
own (directories walked, files probed). A bound reached is a note, ``server-check-incomplete``,
and what was read is reported. File bytes are hashed and dropped one file at a time. A request
that gets no answer (a timeout, a closed connection: :meth:`Reply.failed`) ends the walk; it is
a failure of the run, not a finding (``check`` exits 2 then).

Findings are :class:`~skills_core.validation.Finding` values whose ``file`` is the URI they are
about (a file's, or the skill's), grouped per listed skill in a
:class:`~skills_core.check.ValidationReport` (the server's own findings are the report's), so
``--ignore``, ``--strict`` and the JSON form work as they do for ``validate``. Every code is in
:data:`skills_core.rules.RULES`, family ``server``. Server text is kept as sent; whoever prints
it shows it through :mod:`skills_core.display`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Mapping

from ..jsonvalue import JSONValue
from ..messages import Era
from ._types import (
    INVALID_PARAMS,
    Call,
    CheckBounds,
    Reply,
    ServerCheckResult,
)
from ._walk import StoppedError, Walk

__all__ = [
    "Call",
    "Reply",
    "CheckBounds",
    "ServerCheckResult",
    "CheckGenerator",
    "check_server",
    "run_check",
    "INVALID_PARAMS",
]

#: What :func:`check_server` is: a generator of calls, sent replies, returning the result.
CheckGenerator = Generator[Call, Reply, ServerCheckResult]


def check_server(
    label: str,
    *,
    era: Era,
    capabilities: object,
    meta: Mapping[str, JSONValue] | None = None,
    bounds: CheckBounds | None = None,
) -> CheckGenerator:
    """Check a connected server: yield each :class:`Call`, take its :class:`Reply`, return findings.

    Args:
        label: The server's label (the ``path`` of every skill report).
        era: The era the handshake settled.
        capabilities: The ``capabilities`` of the handshake's answer, as sent.
        meta: The request ``_meta`` of the modern era (``None`` in the legacy era).
        bounds: How much to read (:class:`CheckBounds` defaults).

    Returns:
        A generator: ``next()`` gives the first call, ``send(reply)`` each next one; its
        ``StopIteration.value`` is the :class:`ServerCheckResult`.
    """
    walk = Walk(label, era, meta, bounds or CheckBounds())
    with contextlib.suppress(StoppedError):
        yield from walk.run(capabilities)
    return walk.result()


def run_check(
    respond: Callable[[Call], Reply],
    label: str = "server",
    *,
    era: Era,
    capabilities: object,
    meta: Mapping[str, JSONValue] | None = None,
    bounds: CheckBounds | None = None,
) -> ServerCheckResult:
    """Run :func:`check_server` against ``respond``, a function from calls to replies.

    The pure driver the tests use (a server object's ``handle`` behind a function); the
    arguments after ``respond`` are :func:`check_server`'s.
    """
    walk = check_server(label, era=era, capabilities=capabilities, meta=meta, bounds=bounds)
    try:
        call = next(walk)
        while True:
            call = walk.send(respond(call))
    except StopIteration as stop:
        result: ServerCheckResult = stop.value
        return result
