"""Opaque, unforgeable pagination cursors.

Theory of operation
-------------------
Every paginated result here (``skills/list``, ``resources/list``, ``resources/directory/read``) is
sorted by a string key (a URI, or a child's name), and a page starts *after* the last key of the
previous page. That is keyset pagination: a page costs ``O(log n + page)`` with a binary search, and
a catalog that changes between pages neither repeats nor skips the items that did not change.

The cursor carries that last key, so it must not be forgeable: a client could otherwise start a
listing anywhere, or replay a cursor of one directory against another. Each cursor is

    base64url( HMAC-SHA256(key, context || position)[:16] || position )

without padding, where ``context`` binds the cursor to the method and, for a directory read, to
the directory URI. The key is injected by the caller (the core has no randomness; adapters pass
``os.urandom(32)``), so cursors die with the server process, which is what the base protocol's
"cursors are opaque" allows. A tag of 128 bits is far beyond what an online guesser can reach.

Decoding is strict (alphabet, no padding, canonical re-encoding, length cap, strict UTF-8) and a
failure is simply ``None``; the handler answers ``-32602`` (docs/protocol.md#results).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable
from typing import Final, final

__all__ = [
    "MIN_KEY_BYTES",
    "MAX_CURSOR_LENGTH",
    "CURSOR_MALFORMED",
    "CURSOR_OTHER_LISTING",
    "CURSOR_FOREIGN",
    "REFUSALS",
    "CursorCodec",
]

#: Why a cursor was refused (:meth:`CursorCodec.refusal`), in words for an operator's log; the
#: client is told ``-32602 Invalid cursor`` whatever the reason.
CURSOR_MALFORMED: Final = "the cursor is malformed (not one this server issues)"
CURSOR_OTHER_LISTING: Final = "the cursor was issued by this server for another listing"
CURSOR_FOREIGN: Final = (
    "the cursor is not signed with this server's key (issued by a server with another secret: "
    "workers or servers that do not share the key file, or a restart with a new secret; or "
    "altered, or issued for another directory)"
)
#: Every reason :meth:`CursorCodec.refusal` gives.
REFUSALS: Final = (CURSOR_MALFORMED, CURSOR_OTHER_LISTING, CURSOR_FOREIGN)

#: Shortest accepted HMAC key.
MIN_KEY_BYTES: Final = 16
#: Longest cursor accepted: a position is at most one URI (8,192 characters, in UTF-8 at most
#: 4 bytes each) plus the tag, in base64.
MAX_CURSOR_LENGTH: Final = 44_000

_TAG_BYTES: Final = 16


@final
class CursorCodec:
    """Make and check cursors bound to a context.

    Example:
        >>> codec = CursorCodec(b"k" * 32)
        >>> cursor = codec.encode("skills/list", "skill://a/SKILL.md")
        >>> codec.decode("skills/list", cursor)
        'skill://a/SKILL.md'
        >>> codec.decode("resources/list", cursor) is None
        True
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        """Use ``key`` (at least :data:`MIN_KEY_BYTES` bytes) to authenticate cursors.

        Raises:
            ValueError: ``key`` is not bytes or too short.
        """
        if not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES:
            raise ValueError(f"cursor_key must be at least {MIN_KEY_BYTES} bytes")
        self._key = key

    def _tag(self, context: str, position: bytes) -> bytes:
        ctx = context.encode("utf-8")
        message = len(ctx).to_bytes(4, "big") + ctx + position
        return hmac.new(self._key, message, hashlib.sha256).digest()[:_TAG_BYTES]

    def encode(self, context: str, position: str) -> str:
        """Return the cursor for "continue after ``position``" within ``context``."""
        data = position.encode("utf-8")
        raw = self._tag(context, data) + data
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def decode(self, context: str, cursor: object) -> str | None:
        """Return the position a cursor carries, or None when it is not one of ours for ``context``."""
        raw = _raw(cursor)
        if raw is None:
            return None
        tag, data = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        if not hmac.compare_digest(tag, self._tag(context, data)):
            return None
        # Authentic, so it is a position we encoded: always UTF-8.
        return data.decode("utf-8")

    @staticmethod
    def well_formed(cursor: object) -> bool:
        """Whether ``cursor`` has the form of a cursor (whatever key signed it, for whatever context).

        :meth:`decode` refuses a well-formed cursor only when its signature does not match: it
        was signed with another key (a server with another secret), for another context, or
        altered. Only for telling an operator why a cursor was refused.
        """
        return _raw(cursor) is not None

    def refusal(self, cursor: object, listings: Iterable[str]) -> str:
        """Why :meth:`decode` refused ``cursor`` for a context (call it only for one it refused).

        Args:
            cursor: The cursor refused.
            listings: The contexts of this server's other listings (the methods whose context
                is the method alone), to tell a cursor of another listing.

        Returns:
            :data:`CURSOR_MALFORMED`, :data:`CURSOR_OTHER_LISTING` or :data:`CURSOR_FOREIGN`.
        """
        if _raw(cursor) is None:
            return CURSOR_MALFORMED
        if any(self.decode(context, cursor) is not None for context in listings):
            return CURSOR_OTHER_LISTING
        return CURSOR_FOREIGN


def _raw(cursor: object) -> bytes | None:
    """The bytes a cursor spells (tag and position), or None when it is not of a cursor's form."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_LENGTH:
        return None
    if not cursor.isascii():
        return None
    padded = cursor + "=" * (-len(cursor) % 4)
    try:
        raw = base64.b64decode(padded, altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < _TAG_BYTES:
        return None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != cursor:
        return None
    return raw
