"""The value encoding of MCP's HTTP routing headers (``Mcp-Name``, ``Mcp-Method``), both directions.

Theory of operation
-------------------
Streamable HTTP 2026-07-28 mirrors parts of the JSON-RPC body into headers so that proxies can
route without parsing it (http-transport.md §2.1). ``Mcp-Name`` carries ``params.uri`` of
``resources/read`` (or ``params.name`` of ``tools/call`` / ``prompts/get``), and a URI or a name
can hold characters no header field can. The spec's escape: a value that is not plain visible
ASCII (0x20-0x7E) without surrounding whitespace, or that already looks like the escape, travels as

    =?base64?<base64 of its UTF-8 bytes, standard alphabet, padded>?=

The markers are lowercase and case-sensitive. A receiver decodes a value that wears both markers
before comparing it with the body; a value that wears them but does not decode (bad base64, bad
UTF-8) matches nothing. Everything else is taken as it is, after trimming the optional whitespace
HTTP allows around a field value.

Pure functions, no I/O: the server app (:mod:`skills_core.adapters.asgi`) decodes with
:func:`decode_header_value`, and an HTTP client encodes with :func:`encode_header_value`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

__all__ = ["SENTINEL_PREFIX", "SENTINEL_SUFFIX", "encode_header_value", "decode_header_value"]

#: Opening and closing markers of an encoded value (T26 "Value Encoding"; case-sensitive).
SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="

#: HTTP's optional whitespace around a field value (RFC 9110 §5.6.3: SP and HTAB).
_OWS: Final = " \t"


def _is_plain(value: str) -> bool:
    return (
        all(" " <= char <= "~" for char in value)
        and value.strip(_OWS) == value
        and not (value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX))
    )


def encode_header_value(value: str) -> str:
    """The header form of ``value``: itself when plain visible ASCII, else the base64 escape.

    Args:
        value: The body's value (a method, a URI, a tool or prompt name).

    Returns:
        A string of visible ASCII that :func:`decode_header_value` turns back into ``value``.

    Raises:
        UnicodeEncodeError: ``value`` holds a lone surrogate (it has no UTF-8 form).

    Example:
        >>> encode_header_value("skill://pdf-processing/SKILL.md")
        'skill://pdf-processing/SKILL.md'
        >>> encode_header_value("skill://café/SKILL.md")
        '=?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?='
    """
    if _is_plain(value):
        return value
    return (
        SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX
    )


def decode_header_value(raw: bytes) -> str | None:
    """The value a received header field carries, or None when it cannot be read.

    Args:
        raw: The field value as received (ASGI gives bytes; HTTP field values are ISO-8859-1 at
            most, and MCP's are ASCII).

    Returns:
        The decoded value; None when the field holds bytes outside visible ASCII, or wears the
        escape's markers without a valid base64 payload of UTF-8. None never equals a body value,
        so the caller's comparison fails, as the spec asks.

    Example:
        >>> decode_header_value(b" =?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?= ")
        'skill://café/SKILL.md'
        >>> decode_header_value(b"=?base64?not base64?=") is None
        True
    """
    try:
        text = raw.decode("ascii").strip(_OWS)
    except UnicodeDecodeError:
        return None
    if not (text.startswith(SENTINEL_PREFIX) and text.endswith(SENTINEL_SUFFIX)):
        return text if text.isprintable() else None
    if len(text) < len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX):  # "=?base64?=": markers overlap
        return None
    payload = text[len(SENTINEL_PREFIX) : len(text) - len(SENTINEL_SUFFIX)]
    try:
        return base64.b64decode(payload, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
