"""The settings of a skills server, in one frozen value.

Theory of operation: every constructor of a server (:class:`~skills_core.server.SkillsServer`,
:meth:`~skills_core.server.SkillsServer.from_files`, :func:`~skills_core.server.server_from_roots`)
takes one :class:`ServerOptions` instead of repeating each setting, and the server keeps it as it
is: settings never change while a server runs (make a new server for new settings), so nothing a
connection cached from them can go stale. The value checks itself when made; the secret that
signs pagination cursors is not a setting and is passed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from ..messages import SKILLS_CORE, CacheHint, CacheScope, Implementation

__all__ = ["DEFAULT_PAGE_SIZE", "DEFAULT_TTL_MS", "DEFAULT_SERVER_INFO", "ServerOptions"]

#: Items per page of ``skills/list``, ``resources/list`` and ``resources/directory/read``. At 200,
#: a catalog of 10,000 skills (what a default host of this library reads whole) is 50 pages, so it
#: is read whole even by a host that caps a listing at 50 pages; a page of 200 typical entries is
#: a few hundred kilobytes.
DEFAULT_PAGE_SIZE: Final = 200
#: ``ttlMs`` of cacheable results: five minutes, as in the spec's examples.
DEFAULT_TTL_MS: Final = 300_000
#: ``serverInfo`` when the caller names none.
DEFAULT_SERVER_INFO: Final = SKILLS_CORE


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """How a server answers: what it declares, how it pages, and what it says about caching.

    Attributes:
        directory_read: Implement and declare ``resources/directory/read`` (CAP-05).
        page_size: Items per page of every paginated result (at least 1).
        ttl_ms: ``ttlMs`` of cacheable modern results (at least 0).
        cache_scope: ``cacheScope`` of cacheable modern results.
        server_info: ``serverInfo`` sent in ``initialize`` and in modern results' ``_meta``.
        instructions: Server instructions for ``server/discover`` and ``initialize``.

    Raises:
        ValueError: a setting has the wrong type or is out of range (nothing is coerced).

    Example:
        >>> ServerOptions(page_size=100, directory_read=False).page_size
        100
    """

    directory_read: bool = True
    page_size: int = DEFAULT_PAGE_SIZE
    ttl_ms: int = DEFAULT_TTL_MS
    cache_scope: CacheScope = CacheScope.PUBLIC
    server_info: Implementation = DEFAULT_SERVER_INFO
    instructions: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.directory_read, bool):
            raise ValueError(f"directory_read must be a bool, not {self.directory_read!r}")
        if not _is_int(self.page_size) or self.page_size < 1:
            raise ValueError(f"page_size must be a positive int, not {self.page_size!r}")
        if not _is_int(self.ttl_ms) or self.ttl_ms < 0:
            raise ValueError(f"ttl_ms must be a non-negative int, not {self.ttl_ms!r}")
        if not isinstance(self.cache_scope, CacheScope):
            raise ValueError(f"cache_scope must be a CacheScope, not {self.cache_scope!r}")
        if not isinstance(self.server_info, Implementation):
            raise ValueError(f"server_info must be an Implementation, not {self.server_info!r}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            raise ValueError(f"instructions must be a str or None, not {self.instructions!r}")

    @property
    def cache_hint(self) -> CacheHint:
        """``ttlMs`` and ``cacheScope`` of cacheable results, as a :class:`CacheHint`."""
        return CacheHint(ttl_ms=self.ttl_ms, scope=self.cache_scope, present=True)
