"""Folder paths to resource URIs and back, with exactly one URI per file.

Theory of operation
-------------------
A server publishes the files under its roots as ``<scheme>://<skill-path>/<file-path>`` (spec,
"Resource Mapping"). The folder names above a skill become its ``<skill-path>`` and the names below
it the ``<file-path>``; every name is one URI path segment, percent-encoded with
:func:`skills_core.uri.encode_path_segment` (UTF-8, uppercase hex). The first segment sits where an
RFC 3986 authority would, so it must be a ``reg-name`` (URI-09, SIL-27): ``:`` and ``@``, which a
path segment may carry raw, are encoded there as ``%3A`` and ``%40``.

The reverse direction serves URIs that clients send. The rule (SIL-01, server side) is:

* split on ``/`` and decode each segment **exactly once** (strict UTF-8);
* refuse ``.``, ``..``, empty segments (``a//b``, a trailing slash; SIL-08) and segments that decode
  to something containing ``/``, ``\\`` or NUL, or any other character no name may carry;
* refuse a segment that is not in the canonical form the encoder produces
  (``encode(decode(s)) != s``): ``%2e%2e``, ``%2f``, ``%41`` for ``A``, lowercase hex, a raw
  ``:`` in the authority. So each file has exactly one URI, and no spelling of a URI reaches a file
  that the canonical spelling would not.

Nothing here touches the disk: the decoded names are handed to a source, which looks them up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..errors import URIError
from ..uri import MAX_URI_LENGTH, encode_path_segment, percent_decode

__all__ = [
    "DEFAULT_SCHEME",
    "check_scheme",
    "encode_segment",
    "encode_folder",
    "decode_segment",
    "split_uri",
]

#: The scheme servers SHOULD use (URI-01).
DEFAULT_SCHEME: Final = "skill"

_SCHEME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_PLAIN_RE: Final = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+")
_PLAIN_AUTHORITY_RE: Final = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=]+")
#: A folder path whose first name matches _PLAIN_AUTHORITY_RE and every other one _PLAIN_RE.
_PLAIN_FOLDER_RE: Final = re.compile(
    r"[A-Za-z0-9\-._~!$&'()*+,;=]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*"
)


def check_scheme(scheme: str) -> str:
    """Return ``scheme`` when it is an RFC 3986 scheme name (URI-13: any scheme may serve skills).

    Raises:
        ValueError: ``scheme`` is not ``ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )``.
    """
    if not isinstance(scheme, str) or _SCHEME_RE.fullmatch(scheme) is None:
        raise ValueError(f"{scheme!r} is not a URI scheme name")
    return scheme


def encode_segment(name: str, *, first: bool = False) -> str:
    """Percent-encode one folder or file name as a URI path segment.

    Args:
        name: The raw name, as the filesystem spells it.
        first: The name is the first segment of a skill path (the authority), where ``:`` and ``@``
            are encoded too so that the segment is a ``reg-name`` (URI-09, SIL-27).

    Raises:
        URIError: the name cannot be a segment (empty, ``.``, ``..``, or containing ``/``, a
            backslash, a control or format character, or a lone surrogate).
    """
    # Fast path: a name made only of characters a segment carries raw is its own encoding.
    if (_PLAIN_AUTHORITY_RE if first else _PLAIN_RE).fullmatch(name) is not None and name not in (
        ".",
        "..",
    ):
        return name
    encoded = encode_path_segment(name)
    if first:
        encoded = encoded.replace(":", "%3A").replace("@", "%40")
    return encoded


def encode_folder(folder: str) -> str:
    """Encode a ``/``-separated folder path (raw names) as a skill path.

    Raises:
        URIError: a name cannot be a segment.
    """
    # Fast path: every name is its own encoding (as in encode_segment), and none is "." or "..".
    if "." not in folder and _PLAIN_FOLDER_RE.fullmatch(folder) is not None:
        return folder
    names = folder.split("/")
    first = encode_segment(names[0], first=True)
    if len(names) == 1:
        return first
    return first + "/" + "/".join([encode_segment(name) for name in names[1:]])


def decode_segment(segment: str, *, first: bool = False) -> str | None:
    """Decode one segment of a client's URI, or return None when it is not canonical.

    ``None`` covers everything a client cannot use to reach a file: empty, ``.`` and ``..``
    segments, escapes that decode to ``/``, ``\\``, NUL or invalid UTF-8, and any spelling other
    than the one :func:`encode_segment` produces (SIL-01).
    """
    if "%" not in segment:
        plain = _PLAIN_AUTHORITY_RE if first else _PLAIN_RE
        if plain.fullmatch(segment) is None or segment in (".", ".."):
            return None
        return segment
    try:
        name = percent_decode(segment, errors="strict")
    except UnicodeDecodeError:
        return None
    try:
        canonical = encode_segment(name, first=first)
    except URIError:
        return None
    return name if canonical == segment else None


def split_uri(uri: str) -> tuple[str, list[str]] | None:
    """Split a client's URI into its scheme and decoded path segments (first = authority).

    Returns:
        ``(scheme, names)``, or None when the URI is not ``<scheme>://<segment>[/<segment>...]``
        with every segment canonical (see :func:`decode_segment`). A trailing slash, a query or a
        fragment, and anything longer than :data:`skills_core.uri.MAX_URI_LENGTH` give None.
    """
    if len(uri) > MAX_URI_LENGTH:
        return None
    scheme, sep, rest = uri.partition("://")
    if not sep or _SCHEME_RE.fullmatch(scheme) is None:
        return None
    segments: Sequence[str] = rest.split("/")
    names: list[str] = []
    for index, segment in enumerate(segments):
        name = decode_segment(segment, first=index == 0)
        if name is None:
            return None
        names.append(name)
    return scheme, names
