"""Self-contained, signed legacy session ids, so any worker of any process can check any session.

Theory of operation
-------------------
A 2025-11-25 client opens a session with ``initialize`` and sends the ``Mcp-Session-Id`` it got on
every later request (docs/requirements.md#http-legacy). A server that kept sessions in memory would pin each
client to the process that saw its ``initialize``; behind a load balancer, or with several uvicorn
workers, the next request lands elsewhere and gets 404. Here the id *is* the session: it carries
everything a request needs (the negotiated protocol version and an expiry) and an HMAC over it,
so a worker that shares the key accepts it and nothing else does (docs/design.md#d10).

    id = base64url( FORMAT || expiry (8 bytes, big-endian seconds) || nonce (16 bytes)
                    || len(version) (1 byte) || version || tag (16 bytes) )
    tag = HMAC-SHA256(key, DOMAIN || len(principal) || principal || everything before the tag)[:16]

without padding: only ``A-Z a-z 0-9 - _``, inside the visible ASCII that HTTP-23 requires. The
nonce (random, from the caller: this module has no randomness) makes ids unpredictable and unique;
the tag makes them unforgeable; nothing in an id is trusted before the tag is checked, and the tag
is compared in constant time. ``principal`` binds a session to whoever opened it when the embedding
application authenticates requests (S25: "bound to the principal"); it is not stored in the id, so
another principal's request fails the tag check like a forged id. ``DOMAIN`` separates these tags
from every other use of the same key.

What such an id cannot do: be revoked before it expires without state shared by every worker. The
ASGI app therefore answers ``DELETE`` with 405, which HTTP-26 allows (see its module docs).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Final, final

__all__ = [
    "MIN_SESSION_KEY_BYTES",
    "SESSION_MALFORMED",
    "SESSION_FOREIGN",
    "SESSION_EXPIRED",
    "SessionCodec",
]

#: Shortest key accepted (as for cursors: 128 bits).
MIN_SESSION_KEY_BYTES: Final = 16

#: Why an id is refused (:meth:`SessionCodec.refusal`), for an operator's log.
SESSION_MALFORMED: Final = "the session id is malformed (not one this server issues)"
SESSION_FOREIGN: Final = (
    "the session id is not signed with this server's key (issued by a server with another "
    "secret, or for another principal, or altered)"
)
SESSION_EXPIRED: Final = "the session id has expired"

_FORMAT: Final = b"\x01"
_DOMAIN: Final = b"skills-core legacy session v1\x00"
_NONCE_BYTES: Final = 16
_TAG_BYTES: Final = 16
#: Longest protocol version string a session can carry (they are dates: 10 characters).
_MAX_VERSION: Final = 32
#: Bytes before the version: format, expiry, nonce, the version's length.
_FIXED: Final = 1 + 8 + _NONCE_BYTES + 1
#: Longest id worth decoding: the fixed fields plus the longest version, in base64.
_MAX_ID_LENGTH: Final = (1 + 8 + _NONCE_BYTES + 1 + _MAX_VERSION + _TAG_BYTES) * 4 // 3 + 4


@final
class SessionCodec:
    """Mint and open session ids under one key.

    Example:
        >>> codec = SessionCodec(b"k" * 32)
        >>> sid = codec.mint("2025-11-25", expires=1_000, nonce=b"n" * 16)
        >>> codec.open(sid, now=999)
        '2025-11-25'
        >>> codec.open(sid, now=1_000) is None  # expired
        True
        >>> codec.open(sid, now=999, principal="bob") is None  # minted for nobody in particular
        True
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        """Use ``key`` (at least :data:`MIN_SESSION_KEY_BYTES` bytes, shared by every worker).

        Raises:
            ValueError: ``key`` is not bytes or too short.
        """
        if not isinstance(key, bytes) or len(key) < MIN_SESSION_KEY_BYTES:
            raise ValueError(f"session key must be at least {MIN_SESSION_KEY_BYTES} bytes")
        self._key = key

    def _tag(self, body: bytes, principal: str) -> bytes:
        who = principal.encode("utf-8")
        message = _DOMAIN + len(who).to_bytes(4, "big") + who + body
        return hmac.new(self._key, message, hashlib.sha256).digest()[:_TAG_BYTES]

    def mint(self, version: str, *, expires: int, nonce: bytes, principal: str = "") -> str:
        """A new session id.

        Args:
            version: The protocol version ``initialize`` negotiated (ASCII, at most 32 characters).
            expires: When the id stops being accepted, in whole seconds since the epoch.
            nonce: 16 random bytes (``os.urandom(16)``): what makes the id unpredictable.
            principal: Who opened the session, as the embedding application names them; ``""``
                when requests are not authenticated.

        Returns:
            The id: base64url without padding, 70 characters or so.

        Raises:
            ValueError: a bad version, expiry or nonce.
        """
        raw_version = version.encode("ascii")
        if not 0 < len(raw_version) <= _MAX_VERSION:
            raise ValueError(f"cannot carry protocol version {version!r}")
        if len(nonce) != _NONCE_BYTES:
            raise ValueError(f"nonce must be {_NONCE_BYTES} bytes")
        body = (
            _FORMAT
            + expires.to_bytes(8, "big")
            + nonce
            + len(raw_version).to_bytes(1, "big")
            + raw_version
        )
        raw = body + self._tag(body, principal)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def open(self, session_id: str, *, now: int, principal: str = "") -> str | None:
        """The negotiated version an id carries, or None when it is not a live id of ours.

        Args:
            session_id: The ``Mcp-Session-Id`` value received.
            now: The current time, in seconds since the epoch.
            principal: Who sends the request (as for :meth:`mint`).

        Returns:
            The protocol version, or None when the id is malformed, forged, minted for another
            principal or under another key, or expired.
        """
        body = _body(session_id)
        if body is None or not hmac.compare_digest(body[1], self._tag(body[0], principal)):
            return None
        # Authentic from here on: the fields are ours.
        fields = body[0]
        if fields[:1] != _FORMAT or fields[_FIXED - 1] != len(fields) - _FIXED:
            return None
        if int.from_bytes(fields[1:9], "big") <= now:
            return None
        return fields[_FIXED:].decode("ascii")

    def refusal(self, session_id: str, *, now: int, principal: str = "") -> str:
        """Why :meth:`open` refuses ``session_id``, in words for an operator's log.

        Call it only for an id :meth:`open` refused (it checks the id again). The client is told
        the same thing whatever the reason (404, initialize again).

        Returns:
            ``SESSION_MALFORMED``, ``SESSION_FOREIGN`` (the signature does not match: another key,
            another principal, or an altered id) or ``SESSION_EXPIRED``.
        """
        body = _body(session_id)
        if body is None:
            return SESSION_MALFORMED
        if not hmac.compare_digest(body[1], self._tag(body[0], principal)):
            return SESSION_FOREIGN
        if int.from_bytes(body[0][1:9], "big") <= now:
            return SESSION_EXPIRED
        return SESSION_MALFORMED  # authentic but not of this format: never minted by this version


def _body(session_id: str) -> tuple[bytes, bytes] | None:
    """(the signed fields, the tag) an id spells, or None when it does not have an id's form."""
    if not session_id or len(session_id) > _MAX_ID_LENGTH or not session_id.isascii():
        return None
    try:
        raw = base64.b64decode(
            session_id + "=" * (-len(session_id) % 4), altchars=b"-_", validate=True
        )
    except (binascii.Error, ValueError):
        return None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != session_id:
        return None  # one spelling per id: no "+", "/", padding or stray bits
    fields, tag = raw[:-_TAG_BYTES], raw[-_TAG_BYTES:]
    if len(fields) <= _FIXED or len(tag) != _TAG_BYTES:
        return None
    return fields, tag
