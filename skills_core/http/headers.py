"""The headers of MCP's Streamable HTTP, for both halves: names, value encoding, media types.

Theory of operation: what a header *says* is decided once, here, for the client half
(:mod:`skills_core.http.client`, which writes them) and the server half
(:mod:`skills_core.http.server`, which reads them), so both ends agree by construction.

* **Names and media types** (docs/requirements.md#http-17, docs/requirements.md#http-client rule 1):
  the transport's own header names, the media types of an answer, the ``Accept`` every POST carries,
  the names a caller may not set (:data:`RESERVED_HEADERS`; HTTP-40), and the versions a
  ``MCP-Protocol-Version`` header routes to the legacy era (:data:`HANDSHAKE_VERSIONS`;
  docs/requirements.md#http-eras).
* **Values** (T26 "Value encoding"): :func:`encode_header_value` sends text that is not plain
  visible ASCII as ``=?base64?...?=``; :func:`decode_header_value` is the one decoder both ends
  use (HTTP-10..12). :func:`check_custom_header` checks a caller's extra header (``--header``).
* **Accept** (RFC 9110 §12.4.2, §12.5.1): :func:`media_ranges` parses an ``Accept`` value with
  its weights, :func:`acceptable` says whether it covers a media type (the most specific range
  naming it decides; ``q=0`` means "not acceptable"), and :func:`accepts_json_and_sse` /
  :func:`accepts_sse` are the two questions the server asks (HTTP-06).

Pure functions of strings and bytes; nothing here does I/O.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from ..errors import LocalProtocolError, quote_for_message

__all__ = [
    "ACCEPT",
    "JSON_MEDIA_TYPE",
    "SSE_MEDIA_TYPE",
    "HEADER_PROTOCOL_VERSION",
    "HEADER_METHOD",
    "HEADER_NAME",
    "HEADER_SESSION_ID",
    "RESERVED_HEADERS",
    "HANDSHAKE_VERSIONS",
    "OWS",
    "encode_header_value",
    "decode_header_value",
    "check_custom_header",
    "media_ranges",
    "acceptable",
    "accepts_json_and_sse",
    "accepts_sse",
]

# --- names and media types ---------------------------------------------------------------------

#: The one JSON media type MCP answers with (docs/requirements.md#http-17).
JSON_MEDIA_TYPE: Final = "application/json"
#: The SSE media type (docs/requirements.md#http-17).
SSE_MEDIA_TYPE: Final = "text/event-stream"
#: ``Accept`` of every POST: both answer types, as the transport requires (HTTP-30).
ACCEPT: Final = f"{JSON_MEDIA_TYPE}, {SSE_MEDIA_TYPE}"

#: Header names, as written on the wire (HTTP field names are case-insensitive).
HEADER_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
HEADER_METHOD: Final = "Mcp-Method"
HEADER_NAME: Final = "Mcp-Name"
HEADER_SESSION_ID: Final = "Mcp-Session-Id"

#: Header names a caller may not set (lower case): the transport's own (HTTP-40: "reserved headers
#: not overridable", as the TypeScript SDK does), and the ones that frame the message itself, which
#: a caller setting them could use to smuggle a second request into the connection.
RESERVED_HEADERS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-encoding",
        "content-length",
        "content-type",
        "expect",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

#: Revisions that use the ``initialize`` handshake (everything older than the stateless one); a
#: ``MCP-Protocol-Version`` header naming one routes a request to the legacy era
#: (docs/requirements.md#http-eras).
HANDSHAKE_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})


# --- header values (T26 "Value encoding") -------------------------------------------------------

_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
#: HTTP's optional whitespace around a field value (RFC 9110 §5.6.3: SP and HTAB).
OWS: Final = " \t"
_TOKEN_CHARACTERS: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _is_plain(value: str) -> bool:
    """True when ``value`` can travel as a header value unchanged and be read back the same."""
    if not value or value != value.strip(OWS):
        return False  # empty vanishes; edge whitespace is stripped by every HTTP parser
    if value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX):
        return False  # would read back as an encoded value
    return all(" " <= c <= "~" for c in value)


def encode_header_value(value: str) -> str:
    """Return ``value`` as an HTTP header value, base64-wrapped when it is not plain ASCII.

    T26: values with non-ASCII or control characters (a tab included), leading or trailing
    spaces, or that look like the sentinel, and the empty value, are sent as
    ``=?base64?<base64 of UTF-8>?=``; others (visible ASCII and inner spaces) as they are.

    Args:
        value: The text to send (a URI, a method name).

    Returns:
        The header value; :func:`decode_header_value` gives ``value`` back.

    Raises:
        LocalProtocolError: ``value`` holds a lone surrogate (it has no UTF-8 form).

    Example:
        >>> encode_header_value("skill://caf\u00e9/SKILL.md")
        '=?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?='
    """
    if _is_plain(value):
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise LocalProtocolError(
            f"cannot send {quote_for_message(value)} in a header: it is not valid Unicode",
            kind="bad-header",
        ) from None
    return f"{_SENTINEL_PREFIX}{base64.b64encode(raw).decode('ascii')}{_SENTINEL_SUFFIX}"


def decode_header_value(raw: bytes | str) -> str | None:
    """Return the text a received header value carries, or None when it cannot be read.

    Both ends use this one decoder: the server app compares the result with the body (HTTP-10..12),
    the client's tests check what it sends. Surrounding optional whitespace is removed first
    (RFC 9110 §5.6.3). A value wearing both markers must wrap canonical, padded base64 of UTF-8;
    any other value must be visible ASCII. None never equals a body value, so a caller's
    comparison fails, as the spec asks.

    Args:
        raw: The field value as received (ASGI gives bytes; MCP's header values are ASCII).

    Example:
        >>> decode_header_value(b" =?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?= ")
        'skill://café/SKILL.md'
        >>> decode_header_value(b"=?base64?not base64?=") is None
        True
    """
    try:
        text = (raw.decode("ascii") if isinstance(raw, bytes) else raw).strip(OWS)
    except UnicodeDecodeError:
        return None
    if not (text.startswith(_SENTINEL_PREFIX) and text.endswith(_SENTINEL_SUFFIX)):
        return text if all(" " <= c <= "~" for c in text) else None
    if len(text) < len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX):  # "=?base64?=": markers overlap
        return None
    payload = text[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
        if base64.b64encode(data).decode("ascii") != payload:
            return None  # not canonical: two spellings of one value would both match
        return data.decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None


def check_custom_header(name: str, value: str) -> tuple[str, str]:
    """Check a header the caller wants sent on every request (``--header``); never quotes the value.

    HTTP-40: credentials go in headers (``Authorization``), never in the URL, and the transport's
    own headers cannot be overridden.

    Args:
        name: The field name (an RFC 9110 token).
        value: The field value; surrounding spaces and tabs are removed.

    Returns:
        ``(name, value)`` as they will be sent.

    Raises:
        LocalProtocolError: kind ``bad-header``: an empty or malformed name, a reserved name, or
            a value with a line break, a control character or a non-ASCII character. The message
            names the header, never its value (it is often a secret).
    """
    if not name or not set(name) <= _TOKEN_CHARACTERS:
        raise LocalProtocolError(
            f"header name {quote_for_message(name)} is not a valid HTTP field name",
            kind="bad-header",
        )
    if name.lower() in RESERVED_HEADERS:
        raise LocalProtocolError(
            f"header {name} is set by the transport itself and cannot be given",
            kind="bad-header",
        )
    stripped = value.strip(" \t")
    if not all(c == "\t" or " " <= c <= "~" for c in stripped):
        raise LocalProtocolError(
            f"the value of header {name} holds a line break, a control or a non-ASCII character",
            kind="bad-header",
        )
    return name, stripped


# --- Accept (RFC 9110 §12.4.2, §12.5.1) ---------------------------------------------------------

#: A token (RFC 9110 §5.6.2), lowercase: a media type's type or subtype.
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9a-z]+")
#: A weight's value (RFC 9110 §12.4.2): 0 to 1 with at most three decimals.
_QVALUE: Final = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


def _split_unquoted(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside double-quoted strings (RFC 9110 §5.6.4)."""
    if '"' not in text:
        return text.split(separator)
    parts: list[str] = []
    start = 0
    quoted = escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif quoted:
            escaped = char == "\\"
            quoted = char != '"'
        elif char == '"':
            quoted = True
        elif char == separator:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def media_ranges(accept: bytes) -> list[tuple[str, str, float]]:
    """The media ranges of an ``Accept`` value, lowercased, each with its weight.

    RFC 9110 §12.4.2, §12.5.1. A weight that is not a qvalue counts as 0 (refused rather than
    guessed); an element that is not a media range is left out.

    Args:
        accept: The field value as received (lines of a repeated ``Accept`` joined by commas).

    Returns:
        ``(type, subtype, weight)`` for each media range, in order.

    Example:
        >>> media_ranges(b"application/json, text/*;q=0.5")
        [('application', 'json', 1.0), ('text', '*', 0.5)]
    """
    ranges: list[tuple[str, str, float]] = []
    for element in _split_unquoted(accept.decode("latin-1").lower(), ","):
        media_range, *parameters = _split_unquoted(element, ";")
        kind, slash, subtype = media_range.strip().partition("/")
        if (
            not slash
            or _TOKEN.fullmatch(kind) is None
            or _TOKEN.fullmatch(subtype) is None
            or (kind == "*" and subtype != "*")
        ):
            continue
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":  # the weight; parameters after it are not the range's
                value = value.strip()
                weight = float(value) if _QVALUE.fullmatch(value) else 0.0
                break
        ranges.append((kind, subtype, weight))
    return ranges


def acceptable(ranges: list[tuple[str, str, float]], kind: str, subtype: str) -> bool:
    """Whether ``kind/subtype`` has a weight above 0 among ``ranges``.

    The weight is that of the most specific range naming the type (``type/subtype`` over
    ``type/*`` over ``*/*``; the highest among equals); a type no range names is not acceptable.

    Args:
        ranges: What :func:`media_ranges` returned.
        kind: The media type's type, lowercase (``"text"``).
        subtype: Its subtype, lowercase (``"event-stream"``).
    """
    best, weight = -1, 0.0
    for range_kind, range_subtype, range_weight in ranges:
        if range_kind == kind and range_subtype == subtype:
            specificity = 2
        elif range_kind == kind and range_subtype == "*":
            specificity = 1
        elif range_kind == "*":
            specificity = 0
        else:
            continue
        if specificity > best:
            best, weight = specificity, range_weight
        elif specificity == best:
            weight = max(weight, range_weight)
    return weight > 0


def accepts_json_and_sse(accept: bytes) -> bool:
    """Whether an ``Accept`` value allows both answer types of a POST (HTTP-06)."""
    ranges = media_ranges(accept)
    return acceptable(ranges, "application", "json") and acceptable(ranges, "text", "event-stream")


def accepts_sse(accept: bytes | None) -> bool:
    """Whether an ``Accept`` value (``None``: the header is absent) allows an event stream."""
    if accept is None:  # RFC 9110 §12.5.1: no Accept means any media type
        return True
    return acceptable(media_ranges(accept), "text", "event-stream")
