"""Sans-IO request handling for a skills server, for both protocol eras.

Theory of operation
-------------------
**One path.** A transport reads a request with its own framing and its own envelope checks (the
newline endpoint :class:`~skills_core.jsonrpc.JsonRpcConnection` for a stream,
:func:`~skills_core.jsonrpc.parse_message` for an HTTP body) and hands the request's method and
params to :meth:`SkillsServer.answer`. The id is the transport's business: the answer is a value,
never an exception, and it is one of three (:data:`~skills_core.jsonrpc.Answer`): the result
object, a result encoded before (:class:`~skills_core.jsonrpc.EncodedResult`: every
``resources/read`` result is one), or an :class:`~skills_core.jsonrpc.ErrorObject`. A stream sends
it with :meth:`~skills_core.jsonrpc.JsonRpcConnection.send_answer`; HTTP maps the error code to a
status. Any unexpected exception becomes ``-32603 Internal error`` with no traceback, path or
exception text in it (ERR-04).

:class:`SkillsServer` holds the settings (:class:`~skills_core.server.options.ServerOptions`,
frozen), the source and the catalog, shared by every client; :meth:`SkillsServer.answer` is
stateless, and takes the one thing a client negotiates, the legacy protocol version, as an
argument. :class:`ServerConnection` is that path for one client: it remembers what its
``initialize`` agreed on and passes it along, so a stream transport serves a connection and an
HTTP transport makes one per request, in the negotiated state it keeps itself
(``server.connection(legacy_version=...)``). :meth:`ServerConnection.handle` is a convenience for
callers that hold a decoded message dict: the same envelope checks
(:func:`~skills_core.jsonrpc.classify_message`), the same answer, the response as a dict.

**Reads block.** The handler reads files through its source, synchronously: with
:class:`~skills_core.server.filesystem.FilesystemSource`, a ``resources/read`` waits for the disk
and then encodes the whole file (text or base64). Called on an event loop, a 16 MiB file stops the
loop until it is done (``tests/benchmarks/bench_loop_latency.py`` measures how long). So a caller
on an event loop passes ``defer_reads_over=N``: a read
of a file the catalog lists as larger than ``N`` bytes then comes back unread, as a
:class:`PendingRead`, whose :meth:`~PendingRead.complete` reads and encodes it; run that in a
worker thread (the asyncio and trio adapters do). ``complete`` touches only the source and pure
encoders, never the server's state, so other requests may be answered meanwhile; the sources of
this library can be read from another thread, and a custom source must allow it to be deferred.

**Eras** (docs/protocol.md, docs/design.md#d2). A request whose ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` is *modern* (:func:`~skills_core.messages.request_era`
decides, the one rule every transport follows): the version must be one we serve (else
``-32022`` with ``data: {supported, requested}``), ``io.modelcontextprotocol/clientCapabilities``
must be an object (else ``-32602``), and it is answered statelessly in the modern shape whatever
the connection did before. Other requests are *legacy* when a legacy version was negotiated
(``params`` may then be absent altogether, as the mcp 2.3.0 client sends them), and ``-32602``
otherwise. Modern results carry ``resultType: "complete"``, ``_meta.serverInfo``, and, on every
cacheable result (``server/discover``, ``resources/list``, ``resources/templates/list``,
``resources/read``, ``skills/list``, ``skills/get``, ``resources/directory/read``), ``ttlMs`` and
``cacheScope``; legacy results carry none of these. Nothing requires ``server/discover`` first, and
no client-side declaration of the extension is ever required (SIL-28, CAP-09).

**Freshness.** ``skills/list`` and ``resources/list`` answer from the catalog of the last scan,
re-scanned when the source sees skills added or removed (it looks at most once per ``ttlMs``; see
:mod:`skills_core.server._live`). ``skills/get``, ``resources/read`` and
``resources/directory/read`` look at the files as they are now: ``skills/get`` re-checks that one
skill through the source (and updates the catalog with what it finds), reads look at the file.
So a file added to a served folder shows up in the next ``skills/get``, as in the spec's
``credit-note.md`` flow. The server never answers from two views: a read that finds a listed file
gone, or bytes the listing does not describe (another size; for files up to 256 KiB, another
digest, hashed once per change), re-checks its skill at once, so the next ``skills/list`` agrees
with the read without waiting for ``ttlMs`` (a deleted skill is no longer listed, an edited file's
entry carries its new digest). :meth:`SkillsServer.refresh` re-scans on demand (``SIGHUP`` in
``skills-core serve``); a scan that fails keeps the catalog served.

What is reused is the *encoded answer* of a read: kept per URI and era
while the file's bytes are equal to the ones it was made from, for files up to 256 KiB, 8 MiB in
all, oldest out first. A source with ``read_since`` (``FilesystemSource``) reads through a
descriptor it holds and could say a file is unchanged without reading it; the filesystem source
never does (no stat signature proves bytes unchanged), so its files are read and compared too.

**One look per received chunk.** A read is answered from a look at the file made after the request
arrived: each answer shows the file as it was at some moment between the request's arrival and
its answer, so an edit shows in the answer to every request sent after it. A stream transport
that says when it has received data (:meth:`ServerConnection.received`; ``ServerStream`` does, for
each chunk) lets the reads of one chunk share the first one's look: they had all arrived by then.
A pipelined burst of reads of one file then costs one look, not one per request. The HTTP app
does the same for the requests that arrive together: each takes a :meth:`SkillsServer.receipt`
once its body is in and lets its event loop run once before asking (see
:mod:`skills_core.adapters._asgi_app`). Without a receipt (a caller of :meth:`SkillsServer.answer`
that passes none), every read looks for itself.

**Paths.** Client URIs are decoded by :func:`skills_core.server.paths.split_uri`: canonical
segments only, no dot segments, no encoded separators, no trailing slash; anything else is
``-32602`` before a source is asked for anything (SIL-01, SIL-08, ERR-03). A URI is served by the
innermost published skill whose root it lies in.

**Listing cost.** Published skills are kept sorted by URI; a page is a binary search for the
cursor's position plus the page itself, and each entry's JSON is built once and reused, so a page
costs the same in a catalog of 100 or 100,000 skills. Results share those cached objects:
serialise them, do not mutate them.

Decisions where the protocol leaves room (tested in ``tests/test_server_handler.py``):

* ``params`` handed to :meth:`SkillsServer.answer` that are not an object (or None) are
  ``-32602``; the envelope (``jsonrpc``, ``id``, a string ``method``, structured ``params``) is the
  transport's to check, and :mod:`skills_core.jsonrpc` does it;
* an unknown method is ``-32601`` before any ``_meta`` check, as is ``resources/directory/read``
  when it is not declared (ERR-05) and ``server/discover`` on a legacy request;
* ``cursor: null`` means the first page; any other cursor we did not issue for that method (and
  directory) is ``-32602 Invalid cursor``, ``""`` included;
* ``initialize`` echoes a legacy version it supports and otherwise answers with the newest one;
* error messages quote the offending URI (cut at 300 characters) and ``data`` carries it whole.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Protocol, final, overload, runtime_checkable

from .._jsonrpc_encode import encode_spliced
from ..digest import compute_digest
from ..errors import URIError
from ..jsonrpc import (
    Answer,
    EncodedResult,
    ErrorObject,
    InvalidMessage,
    JSONObject,
    RequestId,
    RequestReceived,
    classify_message,
)
from ..jsonvalue import JSONValue
from ..messages import (
    CacheHint,
    Era,
    complete_result,
    encode_resource_contents,
    request_era,
    server_capabilities,
)
from ..spec import (
    DIRECTORY_MIME_TYPE,
    LEGACY_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)
from ..uri import SkillURI
from ._live import LiveCatalog
from ._read_cache import READ_CACHE_FILE, CachedRead, ReadCache
from ._subscriptions import SUBSCRIBE, UNSUBSCRIBE, Subscriptions
from .catalog import Catalog
from .changes import ChangeTracker, SkillChanges
from .cursors import REFUSALS, CursorCodec
from .mime import mime_type_for
from .model import OmittedSkill, PublishedSkill
from .options import ServerOptions
from .paths import encode_segment
from .source import MemorySource, SkillSource

__all__ = ["SkillsServer", "ServerConnection", "PendingRead"]

#: Longest URI quoted back in an error message; longer ones are cut (the full one is in ``data``).
_MAX_QUOTED: Final = 300
#: What any failure inside the handler answers: no exception text, no path (ERR-04).
_INTERNAL_ERROR: Final = ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="Internal error")
#: The eras, looked up once (``Era.MODERN`` goes through the enum class each time it is read).
_MODERN: Final = Era.MODERN
_LEGACY: Final = Era.LEGACY

_Params = dict[str, JSONValue]

#: ``-32602 Invalid cursor`` once per reason (``cursors.REFUSALS``), told apart by identity.
_INVALID_CURSOR: Final = {
    reason: ErrorObject(code=ErrorCode.INVALID_PARAMS, message="Invalid cursor")
    for reason in REFUSALS
}
_REFUSAL_NOTES: Final = {id(answer): reason for reason, answer in _INVALID_CURSOR.items()}
#: The cursor contexts that are a method alone (a directory's includes its URI).
_FIXED_CONTEXTS: Final = (
    Method.SKILLS_LIST,
    Method.RESOURCES_LIST,
    Method.RESOURCES_TEMPLATES_LIST,
)


@runtime_checkable
class _ReadsSince(Protocol):
    """A source that can tell a file unchanged without reading it (``FilesystemSource``)."""

    def read_since(
        self, skill: PublishedSkill, file_path: str, version: object | None
    ) -> tuple[bytes | None, object | None] | None: ...


@runtime_checkable
class _ReadsBlock(Protocol):
    """A source whose reads may wait on a network (``StoreSource``): a caller on an event loop
    has such reads deferred to a worker thread, whatever the file's size."""

    def read_blocks(self, skill: PublishedSkill, file_path: str) -> bool: ...


class _RequestError(Exception):
    """An error answer; raised inside the handler only, never out of it."""

    def __init__(self, code: int, message: str, data: JSONValue = None) -> None:
        super().__init__(message)
        self.error = ErrorObject(code=code, message=message, data=data)


def _show(uri: str) -> str:
    return uri if len(uri) <= _MAX_QUOTED else uri[: _MAX_QUOTED - 3] + "..."


def _invalid_params(message: str, data: JSONValue = None) -> _RequestError:
    return _RequestError(ErrorCode.INVALID_PARAMS, message, data)


def _check_legacy_version(legacy_version: str | None) -> None:
    if legacy_version is not None and legacy_version not in SUPPORTED_LEGACY_VERSIONS:
        raise ValueError(
            f"legacy_version must be one of {', '.join(SUPPORTED_LEGACY_VERSIONS)} or None, "
            f"not {legacy_version!r}"
        )


@final
class SkillsServer:
    """A skills server: settings, the catalog, the source it comes from, and the one request path.

    Thread safety: drive a server from one thread or event loop (the adapters do); only
    :meth:`PendingRead.complete` may run elsewhere.

    Example:
        >>> from skills_core import spec_examples
        >>> server = SkillsServer.from_files(
        ...     {f"pdf-processing/{p}": b for p, b in spec_examples.FILES.items()},
        ...     cursor_key=b"k" * 32,
        ... )
        >>> [skill.uri for skill in server.catalog.skills]
        ['skill://pdf-processing/SKILL.md']
        >>> server.answer("ping", None, legacy_version="2025-11-25")
        {}
    """

    __slots__ = (
        "_cache_hint",
        "_cursors",
        "_live",
        "_options",
        "_read_blocks",
        "_read_since",
        "_reads",
        "_receipts",
        "_source",
        "_tracker",
    )

    def __init__(
        self, source: SkillSource, *, cursor_key: bytes, options: ServerOptions | None = None
    ) -> None:
        """Serve the skills of ``source``; scans it once now.

        Args:
            source: Where the skills come from (:class:`MemorySource`, ``FilesystemSource``, ...).
            cursor_key: Secret for pagination cursors, at least 16 bytes; pass ``os.urandom(32)``
                (servers that share clients, such as HTTP workers, share the key).
            options: The settings (:class:`~skills_core.server.options.ServerOptions`); the
                defaults when ``None``.

        Raises:
            ValueError: ``cursor_key`` is too short, or ``options`` is not a ServerOptions.
        """
        if options is None:
            options = ServerOptions()
        elif not isinstance(options, ServerOptions):
            raise ValueError(f"options must be a ServerOptions, not {options!r}")
        self._source = source
        self._cursors = CursorCodec(cursor_key)
        self._options = options
        self._cache_hint = options.cache_hint
        self._live = LiveCatalog(source.scan())
        self._tracker = ChangeTracker(self._live)
        self._reads = ReadCache()
        self._read_since = source.read_since if isinstance(source, _ReadsSince) else None
        self._read_blocks = source.read_blocks if isinstance(source, _ReadsBlock) else None
        self._receipts = 0

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, bytes],
        *,
        cursor_key: bytes,
        options: ServerOptions | None = None,
    ) -> SkillsServer:
        """Serve an in-memory tree ``{relative path: bytes}`` (see :class:`MemorySource`)."""
        return cls(MemorySource(files), cursor_key=cursor_key, options=options)

    @property
    def options(self) -> ServerOptions:
        """The settings; they never change while the server runs."""
        return self._options

    @property
    def source(self) -> SkillSource:
        """The source the skills come from."""
        return self._source

    @property
    def catalog(self) -> Catalog:
        """The catalog being served (the last scan plus skills re-checked since)."""
        return self._live.catalog

    def refresh(self) -> Catalog:
        """Re-scan the source now and serve the result; returns the catalog now served.

        What ``SIGHUP`` does to ``skills-core serve``: the source does the looking (the
        filesystem source follows each root as named, so a root switched to another release is
        scanned there), this server only swaps catalogs. Call it from the thread or event loop
        that drives the server. Nothing is emptied by a failure: when the scan raises (a root
        gone or unreadable), the catalog served is kept and the exception propagates.
        """
        self._live.replace(self._source.scan())
        return self._live.catalog

    @property
    def has_catalog(self) -> bool:
        """Whether there is a catalog to serve yet (for a readiness probe): always, unless the
        source has a ``has_catalog`` attribute saying otherwise (a first fetch still to come)."""
        return bool(getattr(self._source, "has_catalog", True))

    @staticmethod
    def refusal_note(answer: Answer) -> str | None:
        """Why :meth:`answer` refused a cursor (its ``-32602 Invalid cursor``), for a log: one of
        :data:`~skills_core.server.cursors.REFUSALS`, such as ``CURSOR_FOREIGN``; else None."""
        return _REFUSAL_NOTES.get(id(answer))

    def capabilities(self) -> dict[str, JSONValue]:
        """The ServerCapabilities this server declares (CAP-01, CAP-03, CAP-07, PUSH-01)."""
        return server_capabilities(directory_read=self._options.directory_read, changes=True)

    def moved(self) -> bool:
        """Look at the source (at most once per ``ttlMs``); True when the catalog moved since the
        last :meth:`changes` (cheap: see :mod:`~skills_core.server.changes`)."""
        self._live.sync(self._source, self._options.ttl_ms)
        return self._tracker.moved

    def changes(self) -> SkillChanges | None:
        """What changed in the published catalog since the last call, or None if no entry did
        (PUSH-02, PUSH-05).

        It looks at the source afresh, whatever ``ttlMs``: what is announced after the pacer's
        window is the source as it is then, not a file half written when the change was seen.
        """
        self._live.sync(self._source, 0)
        return self._tracker.take() if self._tracker.moved else None

    def connection(self, *, legacy_version: str | None = None) -> ServerConnection:
        """Return a new connection to this server, in a negotiated state if you say so.

        Args:
            legacy_version: ``None`` for a connection that has negotiated nothing (a stream before
                ``initialize``, a modern HTTP request), or the 2025-11-25-era version an earlier
                ``initialize`` agreed on (a legacy HTTP session, restored per request).

        Raises:
            ValueError: ``legacy_version`` is not a version this server supports.
        """
        return ServerConnection(self, legacy_version=legacy_version)

    def receipt(self) -> int:
        """Count a receipt of data by a transport; return the count, for ``received``.

        Call it once the data a request came in has arrived (a stream's chunk, an HTTP body):
        requests that arrived with or before that data may then be answered from files as looked
        at since (see :meth:`answer`).
        """
        self._receipts += 1
        return self._receipts

    # -- the one path -----------------------------------------------------------------------------

    @overload
    def answer(
        self,
        method: str,
        params: JSONObject | None,
        *,
        legacy_version: str | None = None,
        received: int | None = None,
    ) -> Answer: ...

    @overload
    def answer(
        self,
        method: str,
        params: JSONObject | None,
        *,
        legacy_version: str | None = None,
        defer_reads_over: int | None,
        received: int | None = None,
    ) -> Answer | PendingRead: ...

    def answer(
        self,
        method: str,
        params: JSONObject | None,
        *,
        legacy_version: str | None = None,
        defer_reads_over: int | None = None,
        received: int | None = None,
    ) -> Answer | PendingRead:
        """Answer one request; never raises for anything a client sends.

        ``initialize`` is answered here too but changes nothing: its result's
        ``protocolVersion`` is the version to pass as ``legacy_version`` from then on (a
        :class:`ServerConnection` does that).

        Args:
            method: The request's method.
            params: Its ``params`` object, or ``None`` when it had none.
            legacy_version: The legacy version this client negotiated, or ``None``.
            defer_reads_over: Return a :class:`PendingRead` instead of reading a file the catalog
                lists as larger than this many bytes (for callers on an event loop); ``None``
                reads every file now.
            received: The count :meth:`receipt` returned once the request had arrived (a stream
                counts each chunk it reads), or ``None``. With it, a ``resources/read`` may be
                answered from a look at the file made after that receipt, for an earlier request
                of the same batch; an answer still shows the file as it was at some moment after
                the request arrived. ``None`` looks at the file now.

        Returns:
            The result object (shared with the server's caches: do not mutate it), an
            :class:`~skills_core.jsonrpc.EncodedResult`, an
            :class:`~skills_core.jsonrpc.ErrorObject`, or, with ``defer_reads_over``, a
            :class:`PendingRead`.

        Raises:
            ValueError: ``legacy_version`` is not a supported version (the caller's mistake).
        """
        if legacy_version is not None:
            _check_legacy_version(legacy_version)
        try:
            if params is None:
                params = {}
            elif type(params) is not dict:  # an endpoint never passes these; a caller might
                raise _invalid_params("params must be an object (named parameters)")
            if method == _RESOURCES_READ:
                return self._read(params, legacy_version, defer_reads_over, received)
            if method == _INITIALIZE:
                return self._initialize(params)
            return self._dispatch(method, params, legacy_version)
        except _RequestError as refusal:
            return refusal.error
        except Exception:  # noqa: BLE001 - the one place that turns any failure into -32603
            return _INTERNAL_ERROR

    def _dispatch(
        self, method: str, params: _Params, legacy_version: str | None
    ) -> dict[str, JSONValue]:
        handler = _METHODS.get(method)
        if handler is None or (method == _DIRECTORY_READ and not self._options.directory_read):
            raise _RequestError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {_show(method)}")
        era = _era(params, legacy_version)
        if method == _DISCOVER and era is Era.LEGACY:
            raise _RequestError(
                ErrorCode.METHOD_NOT_FOUND,
                "Method not found: server/discover needs the 2026-07-28 request _meta",
            )
        body, cacheable = handler(self, params)
        return complete_result(
            body,
            era=era,
            cache=self._cache_hint if cacheable else None,
            server_info=self._options.server_info,
        )

    # -- lifecycle --------------------------------------------------------------------------------

    def _initialize(self, params: _Params) -> dict[str, JSONValue]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise _invalid_params("initialize needs params.protocolVersion (a string)")
        version = requested if requested in SUPPORTED_LEGACY_VERSIONS else LEGACY_PROTOCOL_VERSION
        result: dict[str, JSONValue] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": self._options.server_info.to_json(),
        }
        if self._options.instructions is not None:
            result["instructions"] = self._options.instructions
        return result

    def _discover(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        body: dict[str, JSONValue] = {
            "supportedVersions": list(SUPPORTED_MODERN_VERSIONS),
            "capabilities": self.capabilities(),
        }
        if self._options.instructions is not None:
            body["instructions"] = self._options.instructions
        return body, True

    def _ping(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        return {}, False

    # -- listings ---------------------------------------------------------------------------------

    def _listing(self) -> LiveCatalog:
        """The catalog ``skills/list`` and ``resources/list`` page through.

        The one place a listing gets it: skills added to or removed from the source since the last
        scan are picked up here, the source looking at most once per ``ttlMs`` (see
        :meth:`~skills_core.server._live.LiveCatalog.sync`).
        """
        live = self._live
        live.sync(self._source, self.options.ttl_ms)
        return live

    def _cursor(self, params: _Params, context: str) -> str | None:
        cursor = params.get("cursor")
        if cursor is None:
            return None
        position = self._cursors.decode(context, cursor)
        if position is None:  # the answer that says (to refusal_note) why it was refused
            refusal = _invalid_params("Invalid cursor")
            refusal.error = _INVALID_CURSOR[self._cursors.refusal(cursor, _FIXED_CONTEXTS)]
            raise refusal
        return position

    def _page(
        self, keys: Sequence[str], position: str | None, context: str
    ) -> tuple[int, int, str | None]:
        start = 0 if position is None else bisect.bisect_right(keys, position)
        end = min(start + self._options.page_size, len(keys))
        next_cursor = None
        if end < len(keys):
            next_cursor = self._cursors.encode(context, keys[end - 1])
        return start, end, next_cursor

    def _skills_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        context = Method.SKILLS_LIST.value
        position = self._cursor(params, context)
        live = self._listing()
        keys = live.listed
        start, end, next_cursor = self._page(keys, position, context)
        skills: list[JSONValue] = []
        for uri in keys[start:end]:
            skill = live.get(uri)
            assert skill is not None
            skills.append(live.entry_json(skill))
        body: dict[str, JSONValue] = {"skills": skills}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        return body, True

    def _resources_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        context = Method.RESOURCES_LIST.value
        position = self._cursor(params, context)
        uris, items = self._listing().resource_index()
        start, end, next_cursor = self._page(uris, position, context)
        body: dict[str, JSONValue] = {"resources": list(items[start:end])}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        return body, True

    def _templates_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        self._cursor(params, Method.RESOURCES_TEMPLATES_LIST.value)
        return {"resourceTemplates": []}, True

    # -- skills/get -------------------------------------------------------------------------------

    def _skills_get(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        uri = _uri_param(params)
        try:
            SkillURI.parse(uri)
        except URIError as exc:
            raise _invalid_params(
                f"No skill is served at {_show(uri)}: a skill is named by the URI of its "
                f"SKILL.md ({exc.message})",
                {"uri": uri},
            ) from None
        live = self._live
        result = self._source.recheck(uri)
        live.update(uri, result)
        # A re-check may have seen more than its skill (the filesystem source: a root switched
        # to another release): the source then re-scans here, and the answer comes from that.
        live.sync(self._source, self._options.ttl_ms)
        skill = live.get(uri)
        if skill is None:
            detail = f" ({result.reason})" if isinstance(result, OmittedSkill) else ""
            raise _invalid_params(f"No skill is served at {_show(uri)}{detail}", {"uri": uri})
        return {"skill": live.entry_json(skill)}, True

    def _notice(self, skill: PublishedSkill) -> bool:
        """A read found the files differ from the catalog: re-check ``skill`` and sync, so later
        listings agree with what the read saw (one view). True when the catalog was replaced."""
        live = self._live
        live.update(skill.uri, self._source.recheck(skill.uri))
        return live.sync(self._source, self._options.ttl_ms) is not None

    # -- resources/read and resources/directory/read ----------------------------------------------

    def _read(
        self,
        params: _Params,
        legacy_version: str | None,
        defer_over: int | None,
        received: int | None,
        again: bool = True,
    ) -> EncodedResult | PendingRead:
        """``resources/read``: the file as it is now (or as looked at since the request arrived);
        the encoded answer reused while its bytes are the file's.

        A listed file found gone, or with bytes other than the listing's, makes the server
        re-check its skill at once (:meth:`_notice`); when that brings a whole new catalog (a
        root switched to another release), the read is resolved ``again`` in it, once.
        """
        era = _era(params, legacy_version)
        uri = params.get("uri")
        if type(uri) is not str:
            uri = _uri_param(params)  # a str subclass, or the error
        resolved = self._live.resolve(uri)
        if resolved is None:
            raise _not_found(uri)
        skill, file_path = resolved
        if not file_path:
            raise _a_directory(uri)
        key = (uri, era is Era.MODERN)  # a bool hashes in C; an Enum member in Python
        cached = self._reads.entries.get(key)
        # A cached file was small when last read (at most 256 KiB), so it is not deferred; one
        # grown since is read here once, and then no longer cached. A read that would wait on a
        # network (a source with read_blocks) is deferred whatever its size.
        blocks = self._read_blocks
        if defer_over is not None and (
            (blocks is not None and blocks(skill, file_path))
            or (
                cached is None
                and (listed := skill.entry.resource(uri)) is not None
                and listed.size > defer_over
            )
        ):
            return PendingRead(
                source=self._source,
                skill=skill,
                file_path=file_path,
                uri=uri,
                era=era,
                hint=self._cache_hint,
                options=self._options,
            )
        if (
            cached is not None
            and received is not None
            and cached.looked >= received
            and cached.skill is skill
        ):
            return cached.encoded  # the file was looked at since this request arrived
        read_since = self._read_since
        version: object | None = None
        if read_since is None:
            read = self._source.read(skill, file_path)
            if read is None:
                refusal = _unread(self._source, skill, file_path, uri)
                if skill.entry.resource(uri) is not None and self._notice(skill) and again:
                    return self._read(params, legacy_version, defer_over, received, False)
                raise refusal
            data = read
        else:
            got = read_since(skill, file_path, None if cached is None else cached.version)
            if got is None:
                refusal = _unread(self._source, skill, file_path, uri)
                if skill.entry.resource(uri) is not None and self._notice(skill) and again:
                    return self._read(params, legacy_version, defer_over, received, False)
                raise refusal
            fresh, version = got
            if fresh is None:  # unchanged since the cached answer was made
                assert cached is not None
                return cached.confirm(version, self._receipts, skill)
            data = fresh
        if cached is not None and cached.data == data:
            return cached.confirm(version, self._receipts, skill)
        if not skill.is_dynamic and not _as_listed(skill, uri, data):
            self._notice(skill)  # these bytes are served: the listing now agrees with them
            now = self._live.resolve(uri)
            if now is not None:  # the skill re-checked: what later reads resolve to
                skill = now[0]
        encoded = _encode_read(
            uri, data, file_path, era=era, hint=self._cache_hint, options=self._options
        )
        self._reads.put(key, CachedRead(version, data, encoded, self._receipts, skill))
        return encoded

    def _directory_read(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        uri = _uri_param(params)
        context = f"{_DIRECTORY_READ}\0{uri}"
        if uri.endswith("/"):
            raise _invalid_params(
                f"{_show(uri)} is not a directory resource; directory URIs have no trailing slash",
                {"uri": uri},
            )
        position = self._cursor(params, context)
        live = self._live
        resolved = live.resolve(uri)
        children = None
        if resolved is not None:
            children = self._source.list_directory(*resolved)
        if children is None:
            raise _invalid_params(f"{_show(uri)} is not a directory resource", {"uri": uri})
        names = [name for name, _ in children]
        start, end, next_cursor = self._page(names, position, context)
        resources: list[JSONValue] = []
        for name, is_dir in children[start:end]:
            child = f"{uri}/{encode_segment(name)}"
            if is_dir:
                resources.append({"uri": child, "name": name, "mimeType": DIRECTORY_MIME_TYPE})
            else:
                resources.append(live.resource_item(child, name, annotate=False))
        body: dict[str, JSONValue] = {"resources": resources}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        return body, True


@final
class ServerConnection:
    """One client's connection to a :class:`SkillsServer`: the one path, plus what it negotiated.

    A stream transport keeps one per client; an HTTP transport makes one per request, in the
    state its session recorded (:meth:`SkillsServer.connection`).
    """

    __slots__ = ("_legacy_version", "_received", "_server", "subscriptions")

    def __init__(self, server: SkillsServer, *, legacy_version: str | None = None) -> None:
        """Start a connection to ``server``; see :meth:`SkillsServer.connection`."""
        _check_legacy_version(legacy_version)
        self._server = server
        self._legacy_version = legacy_version
        self._received: int | None = None
        #: What the client asked to be told of (:mod:`skills_core.server._subscriptions`).
        self.subscriptions = Subscriptions()
        self.subscriptions.legacy = legacy_version is not None

    def listen(self, request_id: RequestId, params: JSONObject | None) -> JSONObject | ErrorObject:
        """Open a 2026-07-28 ``subscriptions/listen`` stream (PUSH-06): the acknowledgement
        notification to send now, or the error to answer the request with; never raises."""
        try:
            _era(params or {}, None)
        except _RequestError as refusal:
            return refusal.error
        return self.subscriptions.listen(request_id, params or {})

    def received(self) -> None:
        """Say that this connection's transport has just received data (a stream's chunk).

        From then on, every request :meth:`answer` is given must have arrived by that call
        (:class:`~skills_core.adapters.ServerStream` calls it after each chunk it buffers), and a
        ``resources/read`` may be answered from a look at its file made since (see ``received``
        in :meth:`SkillsServer.answer`). A connection never told answers each read from a look
        made for it.
        """
        self._received = self._server.receipt()

    @property
    def server(self) -> SkillsServer:
        """The server."""
        return self._server

    @property
    def legacy_version(self) -> str | None:
        """The 2025-11-25-era version ``initialize`` agreed on, or ``None`` before any."""
        return self._legacy_version

    @property
    def legacy(self) -> bool:
        """Whether requests without the modern ``_meta`` are served with legacy semantics."""
        return self._legacy_version is not None

    @overload
    def answer(self, method: str, params: JSONObject | None) -> Answer: ...

    @overload
    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None
    ) -> Answer | PendingRead: ...

    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None = None
    ) -> Answer | PendingRead:
        """Answer one request in this connection's state; never raises.

        As :meth:`SkillsServer.answer`; a successful ``initialize`` also records the version it
        agreed on (:attr:`legacy_version`), and ``resources/(un)subscribe`` (2025-11-25) what the
        client subscribed to (:attr:`subscriptions`).
        """
        if method in _SUBSCRIBE_METHODS:
            if self._legacy_version is None or request_era(params or {}) is _MODERN:
                return ErrorObject(
                    code=ErrorCode.METHOD_NOT_FOUND, message=f"Method not found: {method}"
                )
            return self.subscriptions.subscribe(method, params or {})
        answer = self._server.answer(
            method,
            params,
            legacy_version=self._legacy_version,
            defer_reads_over=defer_reads_over,
            received=self._received,
        )
        if method == _INITIALIZE and type(answer) is dict:
            version = answer["protocolVersion"]
            assert isinstance(version, str)
            self._legacy_version = version
            self.subscriptions.legacy = True
        return answer

    def handle(self, message: object) -> dict[str, JSONValue] | None:
        """Answer one decoded JSON-RPC message, as a response dict; never raises.

        A convenience for callers that hold a message as a dict (tests, in-process use): the
        envelope is checked by :func:`~skills_core.jsonrpc.classify_message`, the request goes
        through :meth:`answer`, and the answer comes back as a response object (an encoded read
        result is decoded again, so transports should call :meth:`answer`).

        Returns:
            The JSON-RPC response object, or None when nothing is to be sent (a notification,
            or a malformed one). Treat it as read-only.
        """
        verdict = classify_message(message)
        if type(verdict) is RequestReceived:
            answer = self.answer(verdict.method, verdict.params)
            return _response_object(verdict.id, answer)
        if type(verdict) is InvalidMessage and verdict.reply is not None:
            response: dict[str, JSONValue] = json.loads(verdict.reply)
            return response
        return None


@final
class PendingRead:
    """A ``resources/read`` of a large file, not read yet (see ``defer_reads_over``).

    Attributes:
        uri: The URI read.
    """

    __slots__ = ("_era", "_file_path", "_hint", "_options", "_skill", "_source", "uri")

    def __init__(
        self,
        *,
        source: SkillSource,
        skill: PublishedSkill,
        file_path: str,
        uri: str,
        era: Era,
        hint: CacheHint,
        options: ServerOptions,
    ) -> None:
        """Made by :meth:`SkillsServer.answer` only."""
        self._source = source
        self._skill = skill
        self._file_path = file_path
        self.uri = uri
        self._era = era
        self._hint = hint
        self._options = options

    def complete(self) -> EncodedResult | ErrorObject:
        """Read the file now and encode its result (blocking; run it in a worker thread).

        Never raises: a file gone since is the error it would have been, a failure ``-32603``.
        """
        try:
            data = _read_now(self._source, self._skill, self._file_path, self.uri)
            return _encode_read(
                self.uri,
                data,
                self._file_path,
                era=self._era,
                hint=self._hint,
                options=self._options,
            )
        except _RequestError as refusal:
            return refusal.error
        except Exception:  # noqa: BLE001 - as in SkillsServer.answer
            return _INTERNAL_ERROR

    def __repr__(self) -> str:
        return f"<PendingRead of {self.uri!r}>"


# -- helpers ------------------------------------------------------------------------------------


def _era(params: _Params, legacy_version: str | None) -> Era:
    if request_era(params) is _MODERN:
        meta = params["_meta"]
        assert isinstance(meta, dict)  # request_era: an object holding the version's key
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise _invalid_params(f"_meta[{META_PROTOCOL_VERSION!r}] must be a string")
        if version not in SUPPORTED_MODERN_VERSIONS:
            raise _RequestError(
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {_show(version)}",
                {"supported": list(SUPPORTED_MODERN_VERSIONS), "requested": version},
            )
        if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
            raise _invalid_params(
                f"Missing required request _meta: {META_CLIENT_CAPABILITIES} must be an object"
            )
        return _MODERN
    if legacy_version is not None:
        return _LEGACY
    meta = params.get("_meta")
    missing = [META_PROTOCOL_VERSION]
    if not isinstance(meta, dict) or not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
        missing.append(META_CLIENT_CAPABILITIES)
    raise _invalid_params(
        "Missing required request _meta: "
        + " and ".join(missing)
        + " (or send initialize first for a 2025-11-25 session)"
    )


def _read_now(source: SkillSource, skill: PublishedSkill, file_path: str, uri: str) -> bytes:
    """The file's bytes now, or the refusal a missing file or a directory gets."""
    data = source.read(skill, file_path)
    if data is None:
        raise _unread(source, skill, file_path, uri)
    return data


def _as_listed(skill: PublishedSkill, uri: str, data: bytes) -> bool:
    """Whether ``data`` is the file ``uri`` as ``skill``'s entry lists it: its size, and its
    digest for a file the read cache may hold (larger files, read each time, by size only)."""
    listed = skill.entry.resource(uri)
    if listed is None or listed.size != len(data):
        return False
    return len(data) > READ_CACHE_FILE or compute_digest(data) == listed.digest


def _unread(source: SkillSource, skill: PublishedSkill, file_path: str, uri: str) -> _RequestError:
    """The refusal of a read the source answered with nothing: a directory, or not found."""
    if source.list_directory(skill, file_path) is not None:
        return _a_directory(uri)
    return _not_found(uri)


def _encode_read(
    uri: str, data: bytes, file_path: str, *, era: Era, hint: CacheHint, options: ServerOptions
) -> EncodedResult:
    """The encoded ``resources/read`` result; the content is spliced in (fewer copies of a file)."""
    name = file_path.rpartition("/")[2]
    item = encode_resource_contents(uri, data, mime_type_for(name))
    result = complete_result(
        {"contents": [item]}, era=era, cache=hint, server_info=options.server_info
    )
    return encode_spliced(result, item, "text" if "text" in item else "blob")


def _response_object(request_id: RequestId, answer: Answer) -> dict[str, JSONValue]:
    if type(answer) is ErrorObject:
        return {"jsonrpc": "2.0", "id": request_id, "error": answer.to_json()}
    result: JSONValue = json.loads(answer.json) if type(answer) is EncodedResult else answer
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _uri_param(params: _Params) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise _invalid_params("params.uri must be a string")
    return uri


def _not_found(uri: str) -> _RequestError:
    return _invalid_params(f"No resource is served at {_show(uri)}", {"uri": uri})


def _a_directory(uri: str) -> _RequestError:
    return _invalid_params(
        f"{_show(uri)} is a directory resource; list it with resources/directory/read",
        {"uri": uri},
    )


_RESOURCES_READ: Final = Method.RESOURCES_READ.value
_INITIALIZE: Final = Method.INITIALIZE.value
_DISCOVER: Final = Method.SERVER_DISCOVER.value
_DIRECTORY_READ: Final = Method.RESOURCES_DIRECTORY_READ.value

_Handler = Callable[[SkillsServer, _Params], tuple[dict[str, JSONValue], bool]]

_SUBSCRIBE_METHODS: Final = frozenset({SUBSCRIBE, UNSUBSCRIBE})
_METHODS: Final[Mapping[str, _Handler]] = {
    _DISCOVER: SkillsServer._discover,
    Method.PING.value: SkillsServer._ping,
    Method.SKILLS_LIST.value: SkillsServer._skills_list,
    Method.SKILLS_GET.value: SkillsServer._skills_get,
    Method.RESOURCES_LIST.value: SkillsServer._resources_list,
    Method.RESOURCES_TEMPLATES_LIST.value: SkillsServer._templates_list,
    _DIRECTORY_READ: SkillsServer._directory_read,
}
