"""Wire shapes of the methods the Skills extension uses, for both protocol eras.

Theory of operation
-------------------
This module knows what the JSON of each request and result looks like, and nothing about what a
server or a host *does* with it. Builders return plain ``dict`` values ready for JSON-RPC; parsers
take decoded JSON from the peer, check it strictly, and return value objects or raise a typed error.

Two eras (docs/protocol.md, docs/design.md#d2):

* **modern** (2026-07-28): stateless. Every request carries ``params._meta`` with the protocol
  version and the client capabilities; every result carries ``resultType: "complete"``, and the
  cacheable ones (``server/discover``, ``resources/list``, ``resources/read``, ``skills/list``,
  ``skills/get``, and ``resources/directory/read`` for the TypeScript SDK's sake) carry ``ttlMs`` and
  ``cacheScope``;
* **legacy** (2025-11-25): a session opened by ``initialize``; requests carry no ``_meta`` and results
  none of the modern fields.

Host-side parsing follows the fail-closed choices of docs/requirements.md: only JSON ``true`` enables
``directoryRead`` (SIL-15); the extension without the ``resources`` capability is not usable
(SIL-16); a missing ``ttlMs``/``cacheScope`` means "stale, private" (SIL-14); a ``resources/read``
result must hold exactly one content item for the requested URI, and its bytes are UTF-8 of ``text``
or the strict base64 decoding of ``blob``, bounded by the expected size before decoding (VER-17,
SIL-11, WG-03); directory children must sit exactly one segment below the directory (SIL-29, WG-01).
"""

from __future__ import annotations

import base64
import binascii
import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, final

from ._version import __version__
from .entry import DEFAULT_LIMITS, Limits, SkillEntry
from .errors import (
    EntryProblem,
    InvalidEntryError,
    RemoteProtocolError,
    URIError,
    VerificationError,
    VerificationKind,
    quote_for_message,
)
from .jsonvalue import JSONValue
from .spec import (
    DIRECTORY_MIME_TYPE,
    DIRECTORY_READ_SETTING,
    EXTENSION_ID,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_PROTOCOL_VERSION,
    ErrorCode,
)
from .uri import check_path_segment

__all__ = [
    "SKILLS_CORE",
    "Era",
    "CacheScope",
    "CacheHint",
    "Implementation",
    "ServerFeatures",
    "ListSkillsEnvelope",
    "ListSkillsPage",
    "RejectedEntry",
    "DirectoryChild",
    "client_capabilities",
    "request_meta",
    "with_meta",
    "request_era",
    "server_capabilities",
    "complete_result",
    "parse_server_features",
    "parse_cache_hint",
    "parse_list_skills_envelope",
    "parse_list_skills_result",
    "parse_get_skill_result",
    "encode_resource_contents",
    "decode_read_result",
    "parse_directory_result",
]


class Era(enum.Enum):
    """Which protocol revision a request or result belongs to."""

    #: 2026-07-28 and later: stateless, ``_meta`` on every request.
    MODERN = "modern"
    #: 2025-11-25: ``initialize``-based sessions.
    LEGACY = "legacy"


#: The members, looked up once: reading ``Era.MODERN`` goes through the enum class on every call,
#: and :func:`request_era` is on every request's path.
_MODERN: Final = Era.MODERN
_LEGACY: Final = Era.LEGACY


class CacheScope(enum.StrEnum):
    """``cacheScope`` values of a CacheableResult (docs/protocol.md#results)."""

    PUBLIC = "public"
    PRIVATE = "private"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheHint:
    """``ttlMs`` and ``cacheScope`` of a result: a freshness hint, never integrity (LIST-10).

    Attributes:
        ttl_ms: Milliseconds the result may be treated as current; 0 means stale at once.
        scope: Whether the result may be shared across authorisation contexts.
        present: False when the peer omitted the fields (treated as ``0``/``private``; SIL-14).
    """

    ttl_ms: int = 0
    scope: CacheScope = CacheScope.PRIVATE
    present: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Implementation:
    """An MCP ``Implementation`` object (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str

    def to_json(self) -> dict[str, JSONValue]:
        """Return ``{"name": ..., "version": ...}``."""
        return {"name": self.name, "version": self.version}


#: How this library introduces itself: the default ``clientInfo`` of a host and ``serverInfo`` of
#: a server (each may name its own).
SKILLS_CORE: Final = Implementation(name="skills-core", version=__version__)


# --- requests ---------------------------------------------------------------------------------


def client_capabilities(*, declare_skills: bool = True) -> dict[str, JSONValue]:
    """Return the client capabilities a host sends; it declares the extension (docs/design.md#d2, SIL-28)."""
    if not declare_skills:
        return {}
    return {"extensions": {EXTENSION_ID: {}}}


def request_meta(
    client_info: Implementation,
    *,
    capabilities: Mapping[str, JSONValue] | None = None,
    protocol_version: str = MODERN_PROTOCOL_VERSION,
) -> dict[str, JSONValue]:
    """Return the ``_meta`` object every modern request carries (docs/protocol.md#request-meta; CAP-10)."""
    caps: dict[str, JSONValue] = (
        dict(capabilities) if capabilities is not None else client_capabilities()
    )
    return {
        META_PROTOCOL_VERSION: protocol_version,
        META_CLIENT_CAPABILITIES: caps,
        META_CLIENT_INFO: client_info.to_json(),
    }


def with_meta(
    params: Mapping[str, JSONValue] | None, meta: Mapping[str, JSONValue] | None
) -> dict[str, JSONValue]:
    """Return request ``params`` with ``_meta`` added (modern) or unchanged (legacy: ``meta=None``)."""
    out: dict[str, JSONValue] = dict(params) if params else {}
    if meta is not None:
        out["_meta"] = dict(meta)
    return out


def request_era(params: Mapping[str, object] | None) -> Era:
    """The era a request belongs to, from its params: the one rule every side and transport uses.

    A request is modern when ``params._meta`` is an object that holds
    ``io.modelcontextprotocol/protocolVersion``, whatever that key's value is (docs/protocol.md
    docs/protocol.md#request-meta: every modern request carries it; a legacy one never has ``_meta``
    keys of the modern revision). Anything else is legacy: no params, no ``_meta``, a ``_meta`` that
    is not an object, or one without the key. The value is the caller's to check once the era is
    known (a string, a version it speaks): a malformed modern request is refused as modern, never
    served as legacy.

    The server (:mod:`skills_core.server.handler`), the HTTP server's checks (when no
    ``MCP-Protocol-Version`` header routes the request), and the HTTP client (which headers a POST
    carries) all decide by this function, so they cannot disagree.

    Args:
        params: The request's ``params`` (``None`` when it has none).

    Returns:
        :attr:`Era.MODERN` or :attr:`Era.LEGACY`.

    Example:
        >>> request_era({"_meta": request_meta(SKILLS_CORE)})
        <Era.MODERN: 'modern'>
        >>> request_era({"_meta": {"progressToken": 1}})
        <Era.LEGACY: 'legacy'>
    """
    if params is None:
        return _LEGACY
    meta = params.get("_meta")
    # A dict first (the JSON case), and None before the slow check against the ABC.
    if type(meta) is dict or (meta is not None and isinstance(meta, Mapping)):
        return _MODERN if META_PROTOCOL_VERSION in meta else _LEGACY
    return _LEGACY


# --- server-side results ----------------------------------------------------------------------


def server_capabilities(*, directory_read: bool, changes: bool = False) -> dict[str, JSONValue]:
    """Return the ServerCapabilities of a skills server (CAP-01, CAP-03, CAP-07, PUSH-01).

    The extension's settings are ``{}`` without directory reads and ``{"directoryRead": true}``
    with them; the ``resources`` capability is always declared alongside, with
    ``{"listChanged": true, "subscribe": true}`` when the server tells clients of changes.
    """
    settings: dict[str, JSONValue] = {DIRECTORY_READ_SETTING: True} if directory_read else {}
    resources: dict[str, JSONValue] = {"listChanged": True, "subscribe": True} if changes else {}
    return {"resources": resources, "extensions": {EXTENSION_ID: settings}}


def complete_result(
    body: Mapping[str, JSONValue],
    *,
    era: Era,
    cache: CacheHint | None = None,
    server_info: Implementation | None = None,
) -> dict[str, JSONValue]:
    """Wrap a result body in the era's envelope fields.

    Modern results get ``resultType: "complete"``, then ``ttlMs``/``cacheScope`` when ``cache`` is
    given, and ``_meta.serverInfo`` when ``server_info`` is given. Legacy results are the body alone.
    """
    out: dict[str, JSONValue] = {}
    if era is Era.MODERN:
        out["resultType"] = "complete"
    out.update(body)
    if era is Era.MODERN:
        if cache is not None:
            out["ttlMs"] = cache.ttl_ms
            out["cacheScope"] = cache.scope.value
        if server_info is not None:
            out["_meta"] = {META_SERVER_INFO: server_info.to_json()}
    return out


def encode_resource_contents(uri: str, data: bytes, mime_type: str | None) -> dict[str, JSONValue]:
    """Return one ``contents`` item for ``data``: ``text`` only when it is exact UTF-8 (DESIGN 9).

    ``text`` is used only for bytes that decode as strict UTF-8 and re-encode to the same bytes
    (always true for strict UTF-8, so no BOM games or surrogates can change a byte); ``blob`` (base64)
    otherwise, and also for large text whose JSON escaping would outgrow base64. A host hashes
    UTF-8(``text``) or the decoded ``blob``, so either way the digest covers the raw bytes (SIL-11).
    """
    item: dict[str, JSONValue] = {"uri": uri}
    if mime_type is not None:
        item["mimeType"] = mime_type
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _text_escapes_past_base64(data):
        item["text"] = text
    else:
        item["blob"] = base64.b64encode(data).decode("ascii")
    return item


#: Below this size the JSON form of a text file is never worth measuring: even six bytes per byte
#: (every byte a control character escaped as ``\u00XX``) stays far under the message cap.
_ESCAPE_CHECK_THRESHOLD: Final = 1 << 20
#: Bytes JSON writes as a two-character escape (``\b \t \n \f \r \" \\``): one byte of growth.
_SHORT_ESCAPES: Final = b'\b\t\n\f\r"\\'
#: The other control characters, written ``\u00XX``: five bytes of growth.
_CONTROL_ESCAPES: Final = bytes(b for b in range(0x20) if b not in _SHORT_ESCAPES)
#: The last UTF-8 byte of U+0085, U+2028 and U+2029, which skills_core.jsonrpc sends escaped
#: (``\u0085``: 6 bytes for 2; ``\u2028``, ``\u2029``: 6 for 3). The byte alone says only "maybe":
#: it ends other characters too.
_SEPARATOR_ENDS: Final = b"\x85\xa8\xa9"
#: Every byte but those above: what one ``bytes.translate`` pass deletes from a file, leaving the
#: bytes that may grow.
_NEVER_ESCAPED: Final = bytes(
    b for b in range(256) if b not in _SHORT_ESCAPES + _CONTROL_ESCAPES + _SEPARATOR_ENDS
)


def _text_escapes_past_base64(data: bytes) -> bool:
    """True when ``data`` as a JSON string would be longer than as base64 (large files only).

    A 16 MiB file of newlines or control characters would become 32-96 MiB of JSON text, past the
    message cap of :mod:`skills_core.jsonrpc`; base64 bounds it at 4/3 of the size.

    One pass over ``data`` (``bytes.translate`` keeping only the bytes that may grow) finds every
    candidate; the counts by kind are taken from those alone (usually a few per cent of the file).
    A candidate ``0x85``, ``0xA8`` or ``0xA9`` is counted as a line separator only if the bound
    it gives decides nothing: then the three separators are counted exactly.
    """
    size = len(data)
    if size < _ESCAPE_CHECK_THRESHOLD:
        return False
    room = 4 * -(-size // 3) - size  # how much longer than the bytes base64 is
    grows = data.translate(None, _NEVER_ESCAPED)  # the one pass over the file
    if 5 * len(grows) <= room:  # even if each grew by the most any byte does
        return False
    short = len(grows.translate(None, _CONTROL_ESCAPES + _SEPARATOR_ENDS))
    ends = len(grows.translate(None, _SHORT_ESCAPES + _CONTROL_ESCAPES))
    growth = short + 5 * (len(grows) - short - ends)
    if growth > room or growth + 4 * ends <= room:
        return growth > room
    return (
        growth
        + 4 * data.count("\u0085".encode())
        + 3 * (data.count("\u2028".encode()) + data.count("\u2029".encode()))
        > room
    )


# --- host-side parsing ------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerFeatures:
    """What a server's capabilities allow a host to do with it.

    Attributes:
        resources: The base ``resources`` capability is declared.
        skills: The extension is declared **and** usable (it needs ``resources``; SIL-16).
        directory_read: ``directoryRead`` is JSON ``true`` (and the extension is usable; SIL-15).
        notices: Human-readable reasons the declaration was not taken at face value.
    """

    resources: bool
    skills: bool
    directory_read: bool
    notices: tuple[str, ...] = ()


def parse_server_features(capabilities: object) -> ServerFeatures:
    """Read a server's ``capabilities`` (from ``server/discover`` or ``initialize``).

    Never raises: anything malformed simply enables less, with a notice saying why.
    """
    notices: list[str] = []
    if not isinstance(capabilities, Mapping):
        return ServerFeatures(
            resources=False,
            skills=False,
            directory_read=False,
            notices=("the server's capabilities are not a JSON object",),
        )
    resources = isinstance(capabilities.get("resources"), Mapping)
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    declared = settings is not None
    if declared and not isinstance(settings, Mapping):
        notices.append(
            f"the server declares {EXTENSION_ID} with {quote_for_message(settings)} instead of "
            "a settings object; the extension is not used (CAP-01)"
        )
        declared = False
    skills = declared and resources
    if declared and not resources:
        notices.append(
            f"the server declares {EXTENSION_ID} without the resources capability; its skills "
            "are not used (SIL-16)"
        )
    directory_read = False
    if skills and isinstance(settings, Mapping):
        value = settings.get(DIRECTORY_READ_SETTING, False)
        directory_read = value is True
        if DIRECTORY_READ_SETTING in settings and not isinstance(value, bool):
            notices.append(
                f"directoryRead is {quote_for_message(value)}, not a boolean; directory reads "
                "stay disabled (SIL-15)"
            )
    return ServerFeatures(
        resources=resources,
        skills=skills,
        directory_read=directory_read,
        notices=tuple(notices),
    )


def _check_result_object(result: object, method: str) -> Mapping[str, Any]:
    if type(result) is not dict and not isinstance(result, Mapping):
        raise RemoteProtocolError(
            f"{method} result must be a JSON object, not {quote_for_message(result)}",
            kind="bad-result",
            rpc_code=ErrorCode.INVALID_PARAMS,
        )
    result_type = result.get("resultType", "complete")
    if result_type != "complete":
        raise RemoteProtocolError(
            f'{method} result has resultType {quote_for_message(result_type)}; only "complete" '
            "results are supported (SIL-14)",
            kind="unsupported-result-type",
        )
    return result


def parse_cache_hint(result: Mapping[str, Any]) -> CacheHint:
    """Read ``ttlMs``/``cacheScope``; missing or malformed values mean ``0``/private (SIL-14)."""
    ttl = result.get("ttlMs")
    scope = result.get("cacheScope")
    present = "ttlMs" in result and "cacheScope" in result
    ttl_ms = 0
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
        ttl_ms = ttl
    elif isinstance(ttl, float) and math.isfinite(ttl) and ttl > 0:
        ttl_ms = int(ttl)
    cache_scope = CacheScope.PUBLIC if scope == "public" else CacheScope.PRIVATE
    return CacheHint(ttl_ms=ttl_ms, scope=cache_scope, present=present)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RejectedEntry:
    """A listing entry that was not accepted, with why (kept out of the registry; SIL-12).

    Attributes:
        index: Position in the page's ``skills`` array.
        uri: The entry's ``uri`` if it was a string.
        error: The full error (:class:`EntryOverLimitError` for over-limit entries).
    """

    index: int
    uri: str | None
    error: InvalidEntryError


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListSkillsPage:
    """One parsed ``skills/list`` page.

    Attributes:
        entries: The valid entries, in order.
        rejected: The invalid or over-limit entries, with reasons.
        next_cursor: The cursor for the next page, or None at the end.
        cache: The page's cache hint.
        unread: Entries past ``max_entries``, never looked at.
    """

    entries: tuple[SkillEntry, ...]
    rejected: tuple[RejectedEntry, ...]
    next_cursor: str | None
    cache: CacheHint
    unread: int = 0


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListSkillsEnvelope:
    """A ``skills/list`` result checked down to its ``skills`` array, entries not yet validated.

    For a caller that validates entries one at a time and may stop before the end (a host within
    its budgets): nothing past the entries it takes is ever looked at.

    Attributes:
        items: The ``skills`` array as the server sent it.
        next_cursor: The cursor for the next page, or None at the end.
        cache: The page's cache hint.
    """

    items: list[object]
    next_cursor: str | None
    cache: CacheHint


def parse_list_skills_envelope(result: object) -> ListSkillsEnvelope:
    """Check a ``skills/list`` result, but not its entries (see :class:`ListSkillsEnvelope`).

    Raises:
        RemoteProtocolError: the result itself is malformed (not an object, ``skills`` not an
            array, a non-string ``nextCursor``, a resultType other than ``complete``).
    """
    body = _check_result_object(result, "skills/list")
    skills = body.get("skills")
    if not isinstance(skills, list):
        raise RemoteProtocolError(
            f"skills/list result has no 'skills' array (got {quote_for_message(skills)})",
            kind="bad-result",
        )
    cursor = body.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise RemoteProtocolError(
            f"skills/list nextCursor must be a string, not {quote_for_message(cursor)}",
            kind="bad-result",
        )
    return ListSkillsEnvelope(items=skills, next_cursor=cursor, cache=parse_cache_hint(body))


def parse_list_skills_result(
    result: object, *, limits: Limits | None = DEFAULT_LIMITS, max_entries: int | None = None
) -> ListSkillsPage:
    """Parse a ``skills/list`` result; each entry is validated on its own (SIL-12).

    Args:
        result: The decoded ``result``.
        limits: Per-skill limits each entry is checked against (None: not checked).
        max_entries: Validate at most this many entries; the rest are counted in ``unread`` and
            never looked at (a page of 200,000 entries costs no more than ``max_entries`` of them).

    Raises:
        RemoteProtocolError: the result itself is malformed (not an object, ``skills`` not an
            array, a non-string ``nextCursor``, a resultType other than ``complete``).
    """
    envelope = parse_list_skills_envelope(result)
    items = envelope.items
    taken = items if max_entries is None else items[: max(0, max_entries)]
    entries: list[SkillEntry] = []
    rejected: list[RejectedEntry] = []
    for index, obj in enumerate(taken):
        try:
            entries.append(SkillEntry.from_json(obj, limits=limits))
        except InvalidEntryError as exc:
            rejected.append(RejectedEntry(index=index, uri=exc.uri, error=exc))
    return ListSkillsPage(
        entries=tuple(entries),
        rejected=tuple(rejected),
        next_cursor=envelope.next_cursor,
        cache=envelope.cache,
        unread=len(items) - len(taken),
    )


def parse_get_skill_result(
    result: object, *, requested_uri: str, limits: Limits | None = DEFAULT_LIMITS
) -> tuple[SkillEntry, CacheHint]:
    """Parse a ``skills/get`` result for ``requested_uri``.

    Raises:
        RemoteProtocolError: the result is not an object or lacks ``skill``.
        InvalidEntryError: the entry is malformed, including an entry for another URI (SIL-13).
        EntryOverLimitError: the entry exceeds ``limits``.
    """
    body = _check_result_object(result, "skills/get")
    if "skill" not in body:
        raise RemoteProtocolError("skills/get result has no 'skill' object", kind="bad-result")
    obj = body["skill"]
    if isinstance(obj, Mapping) and obj.get("uri") != requested_uri:
        problem = EntryProblem(
            code="uri-mismatch",
            pointer="/uri",
            message=f"skills/get for {requested_uri} answered with an entry for "
            f"{quote_for_message(obj.get('uri'))}",
        )
        uri = obj.get("uri")
        raise InvalidEntryError((problem,), uri=uri if isinstance(uri, str) else None)
    entry = SkillEntry.from_json(obj, limits=limits)
    return entry, parse_cache_hint(body)


def _content_error(uri: str, message: str) -> VerificationError:
    return VerificationError(
        f"{uri}: malformed resources/read result: {message}",
        kind=VerificationKind.CONTENT,
        uri=uri,
    )


def decode_read_result(result: object, *, uri: str, max_size: int | None = None) -> bytes:
    """Return the raw bytes of a ``resources/read`` result for ``uri`` (VER-17, SIL-11, WG-03).

    The result must hold exactly one content item whose ``uri`` is exactly ``uri`` and which has
    exactly one of ``text`` (hashed as its UTF-8 encoding) or ``blob`` (strict base64). When
    ``max_size`` is given (the entry's ``size``), content that cannot fit is refused *before* it is
    encoded or decoded: a ``text`` longer than ``max_size`` characters, or a ``blob`` longer than
    ``4 * ceil(max_size / 3)`` characters.

    Raises:
        VerificationError: kind ``content`` for a malformed result, kind ``size`` when the content
            is provably longer than ``max_size``.
        RemoteProtocolError: the result is not an object or has a resultType other than complete.
    """
    body = (
        result
        if type(result) is dict and result.get("resultType", "complete") == "complete"
        else _check_result_object(result, "resources/read")
    )
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise _content_error(uri, "'contents' is not an array")
    try:
        [item] = contents
    except ValueError:
        raise _content_error(
            uri, f"expected exactly one content item, got {len(contents)}"
        ) from None
    if type(item) is not dict and not isinstance(item, Mapping):
        raise _content_error(uri, "the content item is not an object")
    if item.get("uri") != uri:
        raise _content_error(
            uri, f"the content item is for {quote_for_message(item.get('uri'))}, not the URI read"
        )
    text = item.get("text")
    if not isinstance(text, str) or "blob" in item:
        return _decode_blob(item, uri, max_size)
    if max_size is not None and len(text) > max_size:
        raise _oversize(uri, max_size, len(text))
    # The one copy the host makes of a text file: its UTF-8 bytes, hashed and delivered.
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise _content_error(uri, "'text' contains a lone surrogate") from None


def _decode_blob(item: Mapping[str, Any], uri: str, max_size: int | None) -> bytes:
    """The item holds no string ``text`` alone: it must be a ``blob`` alone, strict base64."""
    has_text = "text" in item
    if has_text == ("blob" in item):
        raise _content_error(uri, "the content item must have exactly one of 'text' and 'blob'")
    if has_text:
        raise _content_error(uri, "'text' is not a string")
    blob = item["blob"]
    if not isinstance(blob, str):
        raise _content_error(uri, "'blob' is not a string")
    if max_size is not None and len(blob) > 4 * -(-max_size // 3):
        raise _oversize(uri, max_size, None)
    # Strict base64 (what ``base64.b64decode(validate=True)`` does), read straight from the ASCII
    # string: no intermediate copy of the encoded form.
    try:
        return binascii.a2b_base64(blob, strict_mode=True)
    except ValueError:  # binascii.Error, or a character outside ASCII
        raise _content_error(uri, "'blob' is not valid base64") from None


def _oversize(uri: str, expected: int, actual: int | None) -> VerificationError:
    what = f"at least {actual} bytes" if actual is not None else "more bytes"
    return VerificationError(
        f"{uri}: size mismatch: the entry lists {expected} bytes but the content has {what}",
        kind=VerificationKind.SIZE,
        uri=uri,
        expected=expected,
        actual=actual,
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryChild:
    """One accepted child of a ``resources/directory/read`` result (SIL-29).

    Attributes:
        uri: The child's URI, exactly one segment below the directory.
        name: The last segment of ``uri`` (never the server-supplied ``name``).
        is_directory: ``mimeType`` is ``inode/directory``.
        mime_type: The server-supplied ``mimeType``, if a string.
    """

    uri: str
    name: str
    is_directory: bool
    mime_type: str | None


def parse_directory_result(
    result: object, *, directory_uri: str, max_items: int | None = None
) -> tuple[tuple[DirectoryChild, ...], tuple[str, ...], str | None]:
    """Parse a ``resources/directory/read`` result for ``directory_uri``.

    Children that are not exactly one clean segment below the directory are dropped (WG-01,
    SIL-29); the display name comes from the URI, not the server's ``name``.

    Args:
        result: The decoded ``result``.
        directory_uri: The directory that was read.
        max_items: Look at no more than this many items of ``resources``; each becomes a child
            or a reason it was dropped, so fewer than ``max_items`` of those together means the
            page was read to its end.

    Returns:
        ``(children, dropped, next_cursor)`` where ``dropped`` holds a reason per refused child.

    Raises:
        RemoteProtocolError: the result or its ``resources`` array is malformed.
    """
    body = _check_result_object(result, "resources/directory/read")
    resources = body.get("resources")
    if not isinstance(resources, list):
        raise RemoteProtocolError(
            "resources/directory/read result has no 'resources' array", kind="bad-result"
        )
    cursor = body.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise RemoteProtocolError(
            "resources/directory/read nextCursor must be a string", kind="bad-result"
        )
    prefix = directory_uri + "/"
    children: list[DirectoryChild] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for item in resources if max_items is None else resources[: max(0, max_items)]:
        child_uri = item.get("uri") if isinstance(item, Mapping) else None
        if not isinstance(child_uri, str) or not child_uri.startswith(prefix):
            dropped.append(
                f"{quote_for_message(child_uri)} is not inside {directory_uri}; dropped (WG-01)"
            )
            continue
        segment = child_uri[len(prefix) :]
        try:
            check_path_segment(segment, uri=child_uri)
        except URIError as exc:
            dropped.append(
                f"{quote_for_message(child_uri)} is not a clean direct child of {directory_uri} "
                f"({exc.message}); dropped (SIL-29)"
            )
            continue
        if child_uri in seen:
            dropped.append(f"{quote_for_message(child_uri)} is listed twice; dropped")
            continue
        seen.add(child_uri)
        assert isinstance(item, Mapping)
        mime = item.get("mimeType")
        children.append(
            DirectoryChild(
                uri=child_uri,
                name=segment,
                is_directory=mime == DIRECTORY_MIME_TYPE,
                mime_type=mime if isinstance(mime, str) else None,
            )
        )
    return tuple(children), tuple(dropped), cursor
