"""Sans-IO request handling for a skills server, for both protocol eras.

Theory of operation
-------------------
A transport decodes one JSON-RPC message and hands it to :meth:`ServerConnection.handle`, which
returns the response object to encode and send (or None for a notification). ``handle`` never
raises: a message that is not a valid request gets the JSON-RPC error it deserves, and any
unexpected exception becomes ``-32603 Internal error`` with no traceback, path or exception text
in it (ERR-04).

Two objects split the state. :class:`SkillsServer` holds the configuration and the catalog, shared
by every connection; :class:`ServerConnection` holds only what one connection negotiated: whether
``initialize`` selected legacy semantics, and the legacy version. A stateless HTTP transport can
make a fresh connection per request.

**Eras** (base-protocol.md, DESIGN.md decision 2). A request whose ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` is *modern*: the version must be one we serve (else
``-32022`` with ``data: {supported, requested}``), ``io.modelcontextprotocol/clientCapabilities``
must be an object (else ``-32602``), and it is answered statelessly in the modern shape whatever
the connection did before. Other requests are *legacy* if ``initialize`` was received on this
connection (``params`` may then be absent altogether, as the mcp 2.3.0 client sends them), and
``-32602`` otherwise. Modern results carry ``resultType: "complete"``, ``_meta.serverInfo``, and,
on every cacheable result (``server/discover``, ``resources/list``, ``resources/templates/list``,
``resources/read``, ``skills/list``, ``skills/get``, ``resources/directory/read``), ``ttlMs`` and
``cacheScope``; legacy results carry none of these. Nothing requires ``server/discover`` first, and
no client-side declaration of the extension is ever required (SIL-28, CAP-09).

**Freshness.** ``skills/list`` and ``resources/list`` answer from the catalog of the last scan,
re-scanned when the source sees skills added or removed (it looks at most once per ``ttlMs``; see
:mod:`skills_core.server._live`). ``skills/get``, ``resources/read`` and
``resources/directory/read`` look at the files as they are now: ``skills/get`` re-checks that one
skill through the source (and updates the catalog with what it finds), reads open the file now.
So a file added to a served folder shows up in the next ``skills/get``, as in the spec's
``credit-note.md`` flow.

**Paths.** Client URIs are decoded by :func:`skills_core.server.paths.split_uri`: canonical
segments only, no dot segments, no encoded separators, no trailing slash; anything else is
``-32602`` before a source is asked for anything (SIL-01, SIL-08, ERR-03). A URI is served by the
innermost published skill whose root it lies in.

**Listing cost.** Published skills are kept sorted by URI; a page is a binary search for the
cursor's position plus the page itself, and each entry's JSON is built once and reused, so a page
costs the same in a catalog of 100 or 100,000 skills. Responses share those cached objects:
serialise them, do not mutate them.

Decisions where the protocol leaves room (tested in ``tests/test_server_handler.py``):

* envelope errors follow :mod:`skills_core.jsonrpc`: a non-object, a missing or non-string
  ``method``, ``jsonrpc`` other than ``"2.0"``, an ``id`` that is not a string or an integer, and
  ``params`` that is not an object or array are ``-32600``; array ``params`` are ``-32602``;
* an unknown method is ``-32601`` before any ``_meta`` check, as is ``resources/directory/read``
  when it is not declared (ERR-05) and ``server/discover`` on a legacy request;
* ``cursor: null`` means the first page; any other cursor we did not issue for that method (and
  directory) is ``-32602 Invalid cursor``, ``""`` included;
* ``initialize`` echoes a legacy version it supports and otherwise answers with the newest one;
* error messages quote the offending URI (cut at 300 characters) and ``data`` carries it whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Final, final

from skills_core._version import __version__
from skills_core.errors import LocalProtocolError, URIError
from skills_core.jsonrpc import EncodedResult, RequestId, encode_result
from skills_core.jsonvalue import JSONValue
from skills_core.messages import (
    CacheHint,
    CacheScope,
    Era,
    Implementation,
    complete_result,
    encode_resource_contents,
    server_capabilities,
)
from skills_core.server._live import LiveCatalog
from skills_core.server.catalog import Catalog
from skills_core.server.cursors import CursorCodec
from skills_core.server.mime import mime_type_for
from skills_core.server.model import OmittedSkill, PublishedSkill
from skills_core.server.paths import encode_segment
from skills_core.server.source import MemorySource, SkillSource
from skills_core.spec import (
    DIRECTORY_MIME_TYPE,
    LEGACY_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)
from skills_core.uri import SkillURI

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TTL_MS",
    "DEFAULT_SERVER_INFO",
    "SkillsServer",
    "ServerConnection",
]

#: Items per page of ``skills/list``, ``resources/list`` and ``resources/directory/read``.
DEFAULT_PAGE_SIZE: Final = 50
#: ``ttlMs`` of cacheable results: five minutes, as in the spec's examples.
DEFAULT_TTL_MS: Final = 300_000
#: ``serverInfo`` when the caller names none.
DEFAULT_SERVER_INFO: Final = Implementation(name="skills-core", version=__version__)

#: Longest URI quoted back in an error message; longer ones are cut (the full one is in ``data``).
_MAX_QUOTED: Final = 300

_RequestId = str | int
_Params = dict[str, JSONValue]


class _RpcError(Exception):
    """An error response to send; raised inside the handler only, never out of it."""

    def __init__(self, code: int, message: str, data: JSONValue = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _show(uri: str) -> str:
    return uri if len(uri) <= _MAX_QUOTED else uri[: _MAX_QUOTED - 3] + "..."


def _invalid_params(message: str, data: JSONValue = None) -> _RpcError:
    return _RpcError(ErrorCode.INVALID_PARAMS, message, data)


def _error_response(request_id: _RequestId | None, error: _RpcError) -> dict[str, JSONValue]:
    body: dict[str, JSONValue] = {"code": int(error.code), "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def _is_request_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


@final
class SkillsServer:
    """A skills server: configuration, the catalog, and the source it comes from.

    Thread safety: none; drive a server from one thread or event loop (the adapters do).

    Example:
        >>> from skills_core import spec_examples
        >>> server = SkillsServer.from_files(
        ...     {f"pdf-processing/{p}": b for p, b in spec_examples.FILES.items()},
        ...     cursor_key=b"k" * 32,
        ... )
        >>> [skill.uri for skill in server.catalog.skills]
        ['skill://pdf-processing/SKILL.md']
    """

    __slots__ = (
        "_cache",
        "_capabilities",
        "_cursors",
        "_live",
        "_reads",
        "_source",
        "cache_scope",
        "directory_read",
        "instructions",
        "page_size",
        "server_info",
        "ttl_ms",
    )

    def __init__(
        self,
        source: SkillSource,
        *,
        cursor_key: bytes,
        directory_read: bool = True,
        page_size: int = DEFAULT_PAGE_SIZE,
        ttl_ms: int = DEFAULT_TTL_MS,
        cache_scope: CacheScope = CacheScope.PUBLIC,
        server_info: Implementation = DEFAULT_SERVER_INFO,
        instructions: str | None = None,
    ) -> None:
        """Serve the skills of ``source``; scans it once now.

        Args:
            source: Where the skills come from (:class:`MemorySource`, ``FilesystemSource``, ...).
            cursor_key: Secret for pagination cursors, at least 16 bytes; pass ``os.urandom(32)``.
            directory_read: Implement and declare ``resources/directory/read`` (CAP-05).
            page_size: Items per page of every paginated result (at least 1).
            ttl_ms: ``ttlMs`` of cacheable modern results (at least 0).
            cache_scope: ``cacheScope`` of cacheable modern results.
            server_info: ``serverInfo`` sent in ``initialize`` and in modern results' ``_meta``.
            instructions: Server instructions for ``server/discover`` and ``initialize``.

        Raises:
            ValueError: a setting is out of range.
        """
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a positive int, not {page_size!r}")
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
            raise ValueError(f"ttl_ms must be a non-negative int, not {ttl_ms!r}")
        self._source = source
        self._cursors = CursorCodec(cursor_key)
        self.directory_read = bool(directory_read)
        self.page_size = page_size
        self.ttl_ms = ttl_ms
        self.cache_scope = CacheScope(cache_scope)
        self.server_info = server_info
        self.instructions = instructions
        self._cache = CacheHint(ttl_ms=ttl_ms, scope=self.cache_scope, present=True)
        self._capabilities = server_capabilities(directory_read=self.directory_read)
        self._live = LiveCatalog(source.scan())
        self._reads = _ReadCache()

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, bytes],
        *,
        cursor_key: bytes,
        directory_read: bool = True,
        page_size: int = DEFAULT_PAGE_SIZE,
        ttl_ms: int = DEFAULT_TTL_MS,
        cache_scope: CacheScope = CacheScope.PUBLIC,
        server_info: Implementation = DEFAULT_SERVER_INFO,
        instructions: str | None = None,
    ) -> SkillsServer:
        """Serve an in-memory tree ``{relative path: bytes}`` (see :class:`MemorySource`)."""
        return cls(
            MemorySource(files),
            cursor_key=cursor_key,
            directory_read=directory_read,
            page_size=page_size,
            ttl_ms=ttl_ms,
            cache_scope=cache_scope,
            server_info=server_info,
            instructions=instructions,
        )

    @property
    def source(self) -> SkillSource:
        """The source the skills come from."""
        return self._source

    @property
    def catalog(self) -> Catalog:
        """The catalog being served (the last scan plus skills re-checked since)."""
        return self._live.catalog

    def refresh(self) -> Catalog:
        """Re-scan the source and serve the result; returns the new catalog."""
        self._live = LiveCatalog(self._source.scan())
        return self._live.catalog

    def capabilities(self) -> dict[str, JSONValue]:
        """The ServerCapabilities this server declares (CAP-01, CAP-03, CAP-07)."""
        return server_capabilities(directory_read=self.directory_read)

    def connection(self) -> ServerConnection:
        """Return a new connection to this server."""
        return ServerConnection(self)


@final
class ServerConnection:
    """One client's connection to a :class:`SkillsServer`.

    Attributes:
        server: The server.
        legacy: Whether ``initialize`` selected legacy (2025-11-25) semantics on this connection.
        legacy_version: The protocol version ``initialize`` agreed on, when ``legacy``.
    """

    __slots__ = ("legacy", "legacy_version", "server")

    def __init__(self, server: SkillsServer) -> None:
        """Start a connection with nothing negotiated."""
        self.server = server
        self.legacy = False
        self.legacy_version: str | None = None

    def handle(self, message: object) -> dict[str, JSONValue] | None:
        """Answer one decoded JSON-RPC message; never raises.

        Args:
            message: Any decoded JSON value; a JSON-RPC request or notification object is expected.

        Returns:
            The JSON-RPC response object to send, or None when nothing is to be sent (a
            notification, or a response from the client). Treat it as read-only.
        """
        if not isinstance(message, dict):
            return _error_response(
                None, _RpcError(ErrorCode.INVALID_REQUEST, "Invalid Request: not a JSON object")
            )
        request_id = message.get("id")
        try:
            return self._handle(message)
        except Exception:  # noqa: BLE001 - the one place that turns any failure into -32603
            if "id" not in message or not _is_request_id(request_id):
                return None
            assert isinstance(request_id, str | int)
            return _error_response(
                request_id, _RpcError(ErrorCode.INTERNAL_ERROR, "Internal error")
            )

    def answer_request(
        self, request_id: RequestId, method: str, params: dict[str, JSONValue] | None
    ) -> dict[str, JSONValue] | EncodedResult:
        """Answer one request whose envelope a JSON-RPC endpoint has already checked; never raises.

        For transports built on :class:`~skills_core.jsonrpc.JsonRpcConnection`: pass the
        ``id``, ``method`` and ``params`` of a :class:`~skills_core.jsonrpc.RequestReceived`. The
        answer is the same as :meth:`handle` gives for that request, in one of two forms: a
        JSON-RPC response object (a result or an error), or, for a success whose result was
        encoded before (a file read again while unchanged), an
        :class:`~skills_core.jsonrpc.EncodedResult` to pass to
        :meth:`~skills_core.jsonrpc.JsonRpcConnection.send_response` with this ``request_id``.
        """
        try:
            if params is None:
                params = {}
            elif type(params) is not dict:  # an endpoint never passes these; a caller might
                raise _invalid_params("params must be an object (named parameters)")
            if method == _RESOURCES_READ:
                result = self._read_encoded(params)
                if type(result) is EncodedResult:
                    return result
            else:
                result = self._dispatch(method, params)
            return {"jsonrpc": "2.0", "id": request_id, "result": result}
        except _RpcError as error:
            return _error_response(request_id, error)
        except Exception:  # noqa: BLE001 - as in handle(): any failure becomes -32603
            return _error_response(
                request_id, _RpcError(ErrorCode.INTERNAL_ERROR, "Internal error")
            )

    # -- envelope ---------------------------------------------------------------------------------

    def _handle(self, message: dict[str, object]) -> dict[str, JSONValue] | None:
        method = message.get("method")
        has_id = "id" in message
        raw_id = message.get("id")
        request_id = (
            raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
        )
        if not isinstance(method, str):
            if "method" not in message and ("result" in message or "error" in message):
                return None  # a response to a request we never send; nothing to answer
            return _error_response(
                request_id,
                _RpcError(ErrorCode.INVALID_REQUEST, "Invalid Request: 'method' must be a string"),
            )
        if message.get("jsonrpc") != "2.0":
            if not has_id:
                return None
            return _error_response(
                request_id,
                _RpcError(ErrorCode.INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\""),
            )
        if not has_id:
            return None  # notifications/initialized, notifications/cancelled, anything else
        if request_id is None:
            return _error_response(
                None,
                _RpcError(
                    ErrorCode.INVALID_REQUEST,
                    "Invalid Request: 'id' must be a string or an integer",
                ),
            )
        params = message.get("params")
        try:
            if params is None and "params" not in message:
                params = {}
            if isinstance(params, list):
                raise _invalid_params("params must be an object (named parameters)")
            if not isinstance(params, dict):
                raise _RpcError(
                    ErrorCode.INVALID_REQUEST, "Invalid Request: 'params' must be an object"
                )
            result = self._dispatch(method, params)
        except _RpcError as error:
            return _error_response(request_id, error)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _era(self, params: _Params) -> Era:
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
            version = meta[META_PROTOCOL_VERSION]
            if not isinstance(version, str):
                raise _invalid_params(f"_meta[{META_PROTOCOL_VERSION!r}] must be a string")
            if version not in SUPPORTED_MODERN_VERSIONS:
                raise _RpcError(
                    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                    f"Unsupported protocol version: {_show(version)}",
                    {"supported": list(SUPPORTED_MODERN_VERSIONS), "requested": version},
                )
            if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
                raise _invalid_params(
                    f"Missing required request _meta: {META_CLIENT_CAPABILITIES} must be an object"
                )
            return Era.MODERN
        if self.legacy:
            return Era.LEGACY
        missing = [META_PROTOCOL_VERSION]
        if not isinstance(meta, dict) or not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
            missing.append(META_CLIENT_CAPABILITIES)
        raise _invalid_params(
            "Missing required request _meta: "
            + " and ".join(missing)
            + " (or send initialize first for a 2025-11-25 session)"
        )

    def _dispatch(self, method: str, params: _Params) -> dict[str, JSONValue]:
        if method == Method.INITIALIZE:
            return self._initialize(params)
        handler = _METHODS.get(method)
        if handler is None or (
            method == Method.RESOURCES_DIRECTORY_READ and not self.server.directory_read
        ):
            raise _RpcError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {_show(method)}")
        era = self._era(params)
        if method == Method.SERVER_DISCOVER and era is Era.LEGACY:
            raise _RpcError(
                ErrorCode.METHOD_NOT_FOUND,
                "Method not found: server/discover needs the 2026-07-28 request _meta",
            )
        body, cacheable = handler(self, params)
        server = self.server
        return complete_result(
            body,
            era=era,
            cache=server._cache if cacheable else None,
            server_info=server.server_info,
        )

    # -- lifecycle --------------------------------------------------------------------------------

    def _initialize(self, params: _Params) -> dict[str, JSONValue]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise _invalid_params("initialize needs params.protocolVersion (a string)")
        version = requested if requested in SUPPORTED_LEGACY_VERSIONS else LEGACY_PROTOCOL_VERSION
        self.legacy = True
        self.legacy_version = version
        server = self.server
        result: dict[str, JSONValue] = {
            "protocolVersion": version,
            "capabilities": server.capabilities(),
            "serverInfo": server.server_info.to_json(),
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return result

    def _discover(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        server = self.server
        body: dict[str, JSONValue] = {
            "supportedVersions": list(SUPPORTED_MODERN_VERSIONS),
            "capabilities": server.capabilities(),
        }
        if server.instructions is not None:
            body["instructions"] = server.instructions
        return body, True

    def _ping(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        return {}, False

    # -- skills -----------------------------------------------------------------------------------

    def _cursor(self, params: _Params, context: str) -> str | None:
        cursor = params.get("cursor")
        if cursor is None:
            return None
        position = self.server._cursors.decode(context, cursor)
        if position is None:
            raise _invalid_params("Invalid cursor")
        return position

    def _page(
        self, keys: Sequence[str], position: str | None, context: str
    ) -> tuple[int, int, str | None]:
        start = 0 if position is None else bisect.bisect_right(keys, position)
        end = min(start + self.server.page_size, len(keys))
        next_cursor = None
        if end < len(keys):
            next_cursor = self.server._cursors.encode(context, keys[end - 1])
        return start, end, next_cursor

    def _skills_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        context = Method.SKILLS_LIST.value
        position = self._cursor(params, context)
        live = self.server._live
        live.sync(self.server.source, self.server.ttl_ms)  # skills added or removed (_live.py)
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
        live = self.server._live
        result = self.server.source.recheck(uri)
        live.update(uri, result)
        if not isinstance(result, PublishedSkill):
            detail = f" ({result.reason})" if isinstance(result, OmittedSkill) else ""
            raise _invalid_params(f"No skill is served at {_show(uri)}{detail}", {"uri": uri})
        skill = live.get(uri)
        assert skill is not None
        return {"skill": live.entry_json(skill)}, True

    # -- resources --------------------------------------------------------------------------------

    def _resources_read(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        uri, data, file_path = self._read_file(params)
        return _read_body(uri, data, file_path), True

    def _read_file(self, params: _Params) -> tuple[str, bytes, str]:
        """The ``resources/read`` of ``params``: (uri, the file's bytes now, its path)."""
        uri = _uri_param(params)
        source = self.server.source
        resolved = self.server._live.resolve(uri)
        if resolved is None:
            raise _not_found(uri)
        skill, file_path = resolved
        data = source.read(skill, file_path) if file_path else None
        if data is None:
            if not file_path or source.list_directory(skill, file_path) is not None:
                raise _invalid_params(
                    f"{_show(uri)} is a directory resource; list it with resources/directory/read",
                    {"uri": uri},
                )
            raise _not_found(uri)
        return uri, data, file_path

    def _read_encoded(self, params: _Params) -> dict[str, JSONValue] | EncodedResult:
        """The result of ``resources/read`` as :meth:`_dispatch` makes it, encoded and cached.

        The file is read every time, as always; only when its bytes equal those of the cached
        answer (same URI, era and server info) is the encoded result reused.
        """
        era = self._era(params)
        uri, data, file_path = self._read_file(params)
        server = self.server
        key = (uri, era)
        cached = server._reads.get(key)
        if cached is not None and cached[0] == data and cached[1] is server.server_info:
            return cached[2]
        result = complete_result(
            _read_body(uri, data, file_path),
            era=era,
            cache=server._cache,
            server_info=server.server_info,
        )
        try:
            encoded = encode_result(result, check_keys=False)
        except LocalProtocolError:  # not for our results; if so, the caller's encoding says why
            return result
        server._reads.put(key, (data, server.server_info, encoded))
        return encoded

    def _resources_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        context = Method.RESOURCES_LIST.value
        position = self._cursor(params, context)
        self.server._live.sync(self.server.source, self.server.ttl_ms)  # as in skills/list
        uris, items = self.server._live.resource_index()
        start, end, next_cursor = self._page(uris, position, context)
        body: dict[str, JSONValue] = {"resources": list(items[start:end])}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        return body, True

    def _templates_list(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        self._cursor(params, Method.RESOURCES_TEMPLATES_LIST.value)
        return {"resourceTemplates": []}, True

    def _directory_read(self, params: _Params) -> tuple[dict[str, JSONValue], bool]:
        uri = _uri_param(params)
        context = f"{Method.RESOURCES_DIRECTORY_READ.value}\0{uri}"
        if uri.endswith("/"):
            raise _invalid_params(
                f"{_show(uri)} is not a directory resource; directory URIs have no trailing slash",
                {"uri": uri},
            )
        position = self._cursor(params, context)
        live = self.server._live
        resolved = live.resolve(uri)
        children = None
        if resolved is not None:
            children = self.server.source.list_directory(*resolved)
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


def _read_body(uri: str, data: bytes, file_path: str) -> dict[str, JSONValue]:
    name = file_path.rpartition("/")[2]
    contents: list[JSONValue] = [encode_resource_contents(uri, data, mime_type_for(name))]
    return {"contents": contents}


_RESOURCES_READ: Final = Method.RESOURCES_READ.value
#: Bytes of file content and encoded answers the read cache of a server may hold, and the largest
#: file it caches: a hot set of small files, not a copy of the catalog.
_READ_CACHE_BYTES: Final = 8 << 20
_READ_CACHE_FILE: Final = 256 << 10

_CachedRead = tuple[bytes, Implementation, EncodedResult]


@final
class _ReadCache:
    """Encoded ``resources/read`` results by (URI, era), bounded in bytes, oldest out first."""

    __slots__ = ("_entries", "_size")

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Era], _CachedRead] = {}
        self._size = 0

    def get(self, key: tuple[str, Era]) -> _CachedRead | None:
        return self._entries.get(key)

    def put(self, key: tuple[str, Era], value: _CachedRead) -> None:
        entries = self._entries
        old = entries.pop(key, None)
        if old is not None:
            self._size -= _cost(old)
        if len(value[0]) > _READ_CACHE_FILE:
            return
        cost = _cost(value)
        while entries and self._size + cost > _READ_CACHE_BYTES:
            self._size -= _cost(entries.pop(next(iter(entries))))
        entries[key] = value
        self._size += cost


def _cost(cached: _CachedRead) -> int:
    """Bytes a cached read holds: the file's and the encoded answer's."""
    return len(cached[0]) + len(cached[2])


def _uri_param(params: _Params) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise _invalid_params("params.uri must be a string")
    return uri


def _not_found(uri: str) -> _RpcError:
    return _invalid_params(f"No resource is served at {_show(uri)}", {"uri": uri})


_Handler = Callable[[ServerConnection, _Params], tuple[dict[str, JSONValue], bool]]

_METHODS: Final[Mapping[str, _Handler]] = {
    Method.SERVER_DISCOVER.value: ServerConnection._discover,
    Method.PING.value: ServerConnection._ping,
    Method.SKILLS_LIST.value: ServerConnection._skills_list,
    Method.SKILLS_GET.value: ServerConnection._skills_get,
    Method.RESOURCES_READ.value: ServerConnection._resources_read,
    Method.RESOURCES_LIST.value: ServerConnection._resources_list,
    Method.RESOURCES_TEMPLATES_LIST.value: ServerConnection._templates_list,
    Method.RESOURCES_DIRECTORY_READ.value: ServerConnection._directory_read,
}
