"""What the store adapters share that needs threads: a bounded blob cache and a refresher.

Theory of operation: a :class:`~skills_core.sources.store.StoreSource` reads file bytes through
a fetcher; :class:`CachingFetcher` keeps the verified bytes of recent reads (at most
:data:`CACHE_BYTES` in all, none larger than :data:`CACHE_FILE_BYTES`, least recently used out
first), so a hot file is read from the store once and a read of it never waits (the request
handler then answers it on its event loop). A :class:`Refresher` is a daemon thread that calls
an adapter's ``check`` every ``interval`` seconds until closed: the adapter looks at its store
there and offers the source a newer state, off the request path. Both may be used from any
thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, final

from ..digest import compute_digest

__all__ = ["CACHE_BYTES", "CACHE_FILE_BYTES", "CachingFetcher", "Refresher", "refresh_interval"]

#: Bytes of verified file content a replica keeps in memory (a bound, not a tuning).
CACHE_BYTES: Final = 64 << 20
#: Largest file kept (larger ones are read from the store each time, in a worker thread).
CACHE_FILE_BYTES: Final = 4 << 20


@final
class CachingFetcher:
    """A :class:`~skills_core.sources.store.BlobFetcher` over ``fetch``, keeping verified bytes.

    Args:
        fetch: Reads the bytes of a digest from the store (may raise ``BlobError``).
        describe: Where a digest's bytes are kept, for log lines.
        limit: Bytes kept at most.
    """

    __slots__ = ("_describe", "_entries", "_fetch", "_limit", "_lock", "_size")

    def __init__(
        self,
        fetch: Callable[[str, int], bytes],
        describe: Callable[[str], str],
        *,
        limit: int = CACHE_BYTES,
    ) -> None:
        self._fetch = fetch
        self._describe = describe
        self._limit = limit
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def fetch(self, digest: str, size: int) -> bytes:
        """The bytes of ``digest``: from memory when kept, else from the store (then kept if
        they match the digest and are small enough)."""
        with self._lock:
            data = self._entries.get(digest)
            if data is not None:
                self._entries.move_to_end(digest)
                return data
        data = self._fetch(digest, size)
        if len(data) == size and size <= CACHE_FILE_BYTES and compute_digest(data) == digest:
            with self._lock:
                if digest not in self._entries:
                    self._entries[digest] = data
                    self._size += len(data)
                    while self._size > self._limit:
                        _, old = self._entries.popitem(last=False)
                        self._size -= len(old)
        return data

    def cached(self, digest: str) -> bool:
        """Whether the bytes of ``digest`` are kept."""
        return digest in self._entries

    def describe(self, digest: str) -> str:
        """Where the bytes of ``digest`` are kept in the store."""
        return self._describe(digest)

    def forget(self) -> None:
        """Drop every kept file."""
        with self._lock:
            self._entries.clear()
            self._size = 0


@final
class Refresher:
    """A daemon thread calling ``check()`` every ``interval`` seconds until :meth:`close`.

    ``check`` must not raise; what it raises is reported through ``log`` and the thread goes on.
    """

    __slots__ = ("_check", "_interval", "_log", "_stop", "_thread")

    def __init__(
        self, check: Callable[[], None], interval: float, *, name: str, log: Callable[[str], None]
    ) -> None:
        self._check = check
        self._interval = interval
        self._log = log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._check()
            except Exception as exc:  # noqa: BLE001 - the thread must go on
                self._log(f"refresh failed ({exc.__class__.__name__}: {exc})")

    def close(self) -> None:
        """Stop the thread (waits for a check under way to end)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()


def refresh_interval(ttl_ms: int) -> float:
    """Seconds between a replica's looks at its store: half of ``ttlMs``, within 0.1-30 s, so
    a publish shows in listings within ``ttlMs`` of its commit (with a margin for the check)."""
    return min(30.0, max(0.1, ttl_ms / 2000))
