"""The read cache of a server: encoded ``resources/read`` answers kept per URI and era (internal).

See "Freshness" in :mod:`skills_core.server.handler`: an answer is reused only while the file's
bytes are equal to the ones it was made from; files up to 256 KiB, 8 MiB in all, oldest out first.
"""

from __future__ import annotations

from typing import Final, final

from ..jsonrpc import EncodedResult
from .model import PublishedSkill

__all__ = ["READ_CACHE_BYTES", "READ_CACHE_FILE", "CachedRead", "ReadCache"]

#: Bytes of file content and encoded answers the read cache of a server may hold, and the largest
#: file it caches: a hot set of small files, not a copy of the catalog.
READ_CACHE_BYTES: Final = 8 << 20
READ_CACHE_FILE: Final = 256 << 10


@final
class CachedRead:
    """A file's encoded ``resources/read`` answer, and what is known of the file it was made of."""

    __slots__ = ("data", "encoded", "looked", "skill", "version")

    def __init__(
        self,
        version: object | None,
        data: bytes,
        encoded: EncodedResult,
        looked: int,
        skill: PublishedSkill,
    ) -> None:
        #: The source's version of the file with these bytes (``read_since``), or None.
        self.version = version
        #: The file's bytes, and the answer made of them.
        self.data = data
        self.encoded = encoded
        #: :meth:`SkillsServer.receipt`'s count when the file was last looked at, and the skill
        #: it was read through (a re-scan makes new ones): a request that arrived before that
        #: look, through the same skill, may be answered from it.
        self.looked = looked
        self.skill = skill

    def confirm(self, version: object | None, looked: int, skill: PublishedSkill) -> EncodedResult:
        """Record a look that found the file's bytes unchanged; return the answer."""
        self.version = version
        self.looked = looked
        self.skill = skill
        return self.encoded

    @property
    def cost(self) -> int:
        """Bytes it holds: the file's and the encoded answer's."""
        return len(self.data) + len(self.encoded)


@final
class ReadCache:
    """Encoded ``resources/read`` results by (URI, modern?), bounded in bytes, oldest out first."""

    __slots__ = ("_size", "entries")

    def __init__(self) -> None:
        #: Read it directly (one dictionary lookup per read); add to it with :meth:`put` only.
        self.entries: dict[tuple[str, bool], CachedRead] = {}
        self._size = 0

    def put(self, key: tuple[str, bool], cached: CachedRead) -> None:
        entries = self.entries
        old = entries.pop(key, None)
        if old is not None:
            self._size -= old.cost
        if len(cached.data) > READ_CACHE_FILE:
            return
        cost = cached.cost
        while entries and self._size + cost > READ_CACHE_BYTES:
            self._size -= entries.pop(next(iter(entries))).cost
        entries[key] = cached
        self._size += cost
