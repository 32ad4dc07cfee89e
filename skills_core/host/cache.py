"""The verified cache: keys, paths, the store interface, and re-verification on every access.

Theory of operation
-------------------
A cache is a second copy of content that was verified once; the verification does not carry over
to bytes that may have changed since (spec, "Cache integrity"). So:

* **Keys are (origin label, uri, digest)**, never the URI alone (ORG-02, ORG-03): the same URI from
  two servers is two entries. The digest makes the cache content-addressed: a new version of a file
  is a new key, and nothing is ever rewritten in place (CACHE-02 (i)).
* **Every access re-verifies** (CACHE-02 option (ii)): :class:`VerifiedCache` reads the bytes,
  checks their length against the **current** entry's ``size`` and their SHA-256 against its
  ``digest``, and only then returns them. A stored label, file name or modification time is never
  taken as evidence (CACHE-03). A mismatch discards the copy and is reported like a mismatch on a
  fresh read; the file is then fetched again (VER-13).
* **Cached content is still MCP content** (CACHE-05, CACHE-06): the cache returns bytes only; the
  host tags them with the origin they are keyed under, exactly as if just fetched.
* It is filled on demand, one verified file at a time, never in bulk (CACHE-01), and an origin's
  content is removed with :meth:`VerifiedCache.forget` (CACHE-07).

**Paths** (:func:`cache_relpath`) encode the origin reversibly and the URI injectively, so
same-URI files of different servers land at different paths and the origin is recoverable from the
path (ORG-04)::

    v1/o<base32(label)>/<sha256(uri) hex>/<digest hex>

Every component is lowercase ASCII letters and digits only (``[a-z2-7]`` for base32 without
padding, ``[0-9a-f]`` for hex), so the paths are the same on case-insensitive filesystems, contain
no separators, dots, spaces or reserved Windows device names (``CON``, ``NUL``, ``COM1``, ...: none
starts with ``o`` or is 64 characters long), and stay under 240 characters in all. The URI is
hashed rather than encoded because URIs may be up to 8 KiB long; the label (at most 64 UTF-8
bytes) is encoded, so :func:`parse_cache_relpath` recovers it exactly, and
:meth:`CacheLocation.is_for` checks a URI against the path.

:class:`MemoryCacheStore` is the pure, in-memory store; the disk store lives in
:mod:`skills_core.host.cache_store`, the host's only I/O module.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final, Protocol, final

from ..digest import check_digest, verify_bytes
from ..entry import SkillResource
from ..errors import VerificationError
from ..spec import DIGEST_PREFIX

__all__ = [
    "CACHE_LAYOUT_VERSION",
    "MAX_CACHE_RELPATH",
    "origin_component",
    "uri_key",
    "cache_relpath",
    "CacheLocation",
    "parse_cache_relpath",
    "CacheStore",
    "MemoryCacheStore",
    "CacheLookup",
    "VerifiedCache",
]

#: The first path component of every cache path; a new layout gets a new one.
CACHE_LAYOUT_VERSION: Final = "v1"
#: Longest relative cache path: ``v1`` + ``o`` and base32 of a 64-byte label (104) + two 64-hex
#: components + three separators. Keeps the whole path short enough for classic Windows limits.
MAX_CACHE_RELPATH: Final = 2 + 1 + 104 + 1 + 64 + 1 + 64

_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_B32: Final = re.compile(r"[a-z2-7]+")


def origin_component(origin: str) -> str:
    """Return the path component for an origin label: ``o`` + lowercase unpadded base32 of UTF-8."""
    raw = base64.b32encode(origin.encode("utf-8")).decode("ascii")
    return "o" + raw.rstrip("=").lower()


def uri_key(uri: str) -> str:
    """Return the path component for ``uri``: the SHA-256 of its UTF-8 bytes, as 64 hex digits."""
    return hashlib.sha256(uri.encode("utf-8", "surrogatepass")).hexdigest()


def cache_relpath(origin: str, uri: str, digest: str) -> str:
    """Return the ``/``-separated relative path of a cached file (ORG-04).

    Args:
        origin: Host-assigned server label (non-empty).
        uri: The resource URI, exactly as in the entry.
        digest: The file's ``sha256:`` digest.

    Raises:
        ValueError: ``origin`` is empty.
        DigestFormatError: ``digest`` is malformed.
    """
    if not origin:
        raise ValueError("an origin label is required for a cache path")
    check_digest(digest)
    return "/".join(
        (CACHE_LAYOUT_VERSION, origin_component(origin), uri_key(uri), digest[len(DIGEST_PREFIX) :])
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheLocation:
    """What a cache path says: the origin (exactly), the URI's key, and the digest.

    Attributes:
        origin: The host-assigned label, recovered from the path.
        uri_key: SHA-256 hex of the URI.
        digest: ``sha256:`` digest of the cached content, according to the path; a claim that
            every read re-checks, never evidence (CACHE-03).
    """

    origin: str
    uri_key: str
    digest: str

    def is_for(self, uri: str) -> bool:
        """True when the path was built for ``uri``."""
        return uri_key(uri) == self.uri_key


def parse_cache_relpath(path: str) -> CacheLocation:
    """Invert :func:`cache_relpath` (ORG-04: the origin is recoverable from the path).

    Raises:
        ValueError: ``path`` is not a cache path of this layout.
    """
    parts = path.split("/")
    if len(parts) != 4 or parts[0] != CACHE_LAYOUT_VERSION:
        raise ValueError(f"not a {CACHE_LAYOUT_VERSION} cache path: {path!r}")
    label, key, digest_hex = parts[1:]
    body = label[1:]
    if not label.startswith("o") or _B32.fullmatch(body) is None:
        raise ValueError(f"bad origin component in cache path {path!r}")
    if _HEX64.fullmatch(key) is None or _HEX64.fullmatch(digest_hex) is None:
        raise ValueError(f"bad uri or digest component in cache path {path!r}")
    padded = body.upper() + "=" * (-len(body) % 8)
    try:
        origin = base64.b32decode(padded).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(f"bad origin component in cache path {path!r}") from None
    if not origin or origin_component(origin) != label:
        raise ValueError(f"bad origin component in cache path {path!r}")
    return CacheLocation(origin=origin, uri_key=key, digest=DIGEST_PREFIX + digest_hex)


class CacheStore(Protocol):
    """Where verified bytes are kept. Implementations never verify; :class:`VerifiedCache` does."""

    def get(self, origin: str, uri: str, digest: str, *, max_size: int) -> bytes | None:
        """Return the stored bytes, or None. May return at most ``max_size + 1`` bytes."""

    def put(self, origin: str, uri: str, digest: str, data: bytes) -> None:
        """Store ``data`` (already verified) under the key, replacing nothing in place."""

    def discard(self, origin: str, uri: str, digest: str) -> None:
        """Remove the stored copy, if any."""

    def forget_origin(self, origin: str) -> None:
        """Remove everything stored for ``origin`` (CACHE-07)."""


@final
class MemoryCacheStore:
    """An in-memory :class:`CacheStore`, optionally bounded, evicting the oldest entries first."""

    __slots__ = ("_data", "_size", "max_bytes")

    def __init__(self, *, max_bytes: int | None = None) -> None:
        """Create an empty store holding at most ``max_bytes`` bytes (unbounded when None)."""
        self.max_bytes = max_bytes
        self._data: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()
        self._size = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._size

    def cached_keys(self) -> tuple[tuple[str, str, str], ...]:
        """Every ``(origin, uri, digest)`` held."""
        return tuple(self._data)

    def get(self, origin: str, uri: str, digest: str, *, max_size: int) -> bytes | None:
        """Return the stored bytes, or None."""
        data = self._data.get((origin, uri, digest))
        if data is None:
            return None
        return data[: max_size + 1] if len(data) > max_size + 1 else data

    def put(self, origin: str, uri: str, digest: str, data: bytes) -> None:
        """Store ``data``; evict the oldest entries while over ``max_bytes``."""
        if self.max_bytes is not None and len(data) > self.max_bytes:
            return
        key = (origin, uri, digest)
        old = self._data.pop(key, None)
        if old is not None:
            self._size -= len(old)
        self._data[key] = data
        self._size += len(data)
        while self.max_bytes is not None and self._size > self.max_bytes:
            _, evicted = self._data.popitem(last=False)
            self._size -= len(evicted)

    def discard(self, origin: str, uri: str, digest: str) -> None:
        """Remove one entry."""
        old = self._data.pop((origin, uri, digest), None)
        if old is not None:
            self._size -= len(old)

    def forget_origin(self, origin: str) -> None:
        """Remove every entry of ``origin``."""
        for key in [k for k in self._data if k[0] == origin]:
            self._size -= len(self._data.pop(key))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheLookup:
    """The outcome of :meth:`VerifiedCache.lookup` or :meth:`VerifiedCache.get`.

    Attributes:
        data: Verified bytes on a hit, else None.
        error: The verification failure when a stored copy no longer matched (``get`` discarded
            it; after ``lookup``, the caller discards it).
    """

    data: bytes | None = None
    error: VerificationError | None = None


_MISS: Final = CacheLookup()


@final
class VerifiedCache:
    """Serves cached bytes only after re-verifying them against the current entry (CACHE-02)."""

    __slots__ = ("store",)

    def __init__(self, store: CacheStore | None) -> None:
        """Wrap ``store`` (None disables caching)."""
        self.store = store

    def lookup(self, origin: str, resource: SkillResource) -> CacheLookup:
        """Return the cached bytes of ``resource`` from ``origin`` when they still verify.

        The size and digest come from ``resource``, the current entry's, never from the store. A
        copy that no longer verifies is reported and left in place: :meth:`discard` drops it (a
        load session asks the router to; :meth:`get` does both).
        """
        if self.store is None:
            return _MISS
        data = self.store.get(origin, resource.uri, resource.digest, max_size=resource.size)
        if data is None:
            return _MISS
        try:
            verify_bytes(data, size=resource.size, digest=resource.digest, uri=resource.uri)
        except VerificationError as exc:
            return CacheLookup(error=exc)
        return CacheLookup(data=data)

    def get(self, origin: str, resource: SkillResource) -> CacheLookup:
        """:meth:`lookup`, and a copy that no longer verifies is discarded."""
        hit = self.lookup(origin, resource)
        if hit.error is not None:
            self.discard(origin, resource)
        return hit

    def discard(self, origin: str, resource: SkillResource) -> None:
        """Drop the cached copy of ``resource`` from ``origin``, if any (CACHE-02)."""
        if self.store is not None:
            self.store.discard(origin, resource.uri, resource.digest)

    def put(self, origin: str, resource: SkillResource, data: bytes) -> None:
        """Keep ``data``, which the caller verified against ``resource``."""
        if self.store is not None:
            self.store.put(origin, resource.uri, resource.digest, data)

    def forget(self, origin: str) -> None:
        """Remove everything cached for ``origin`` (CACHE-07)."""
        if self.store is not None:
            self.store.forget_origin(origin)
