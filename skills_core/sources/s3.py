"""Skills in an S3-compatible bucket: publish a catalog, serve it from any number of replicas.

Theory of operation
-------------------
The only module that imports the object-store library (``obstore``, the optional ``s3`` extra).
Everything it decides is pure and lives elsewhere: the catalog document's format
(:mod:`skills_core.sources.published`) and the rules and the verified reads
(:mod:`skills_core.sources.store`).

**Layout** under ``s3://BUCKET/PREFIX/``:

* ``blobs/sha256/<hex>``: each published file's bytes, stored once under their digest and never
  changed (a file shared by skills, or by two publishes, is one object);
* ``catalogs/<generation, 20 digits>.json``: each publish's catalog document, written once
  (create-only: two publishers cannot take one generation);
* ``catalog.json``: the current document, written last: **the commit point**.

**Publishing** (:func:`publish`) builds the catalog the way ``serve ROOT`` does (the caller's
source: a folder or a git commit), lists the blobs already stored, uploads the missing ones
(each read through the source and checked against the digest its entry publishes: a file that
changed while publishing stops the publish before anything is committed), writes the history
document of the next generation, and then ``catalog.json`` (conditionally on the version read,
where the store supports it, so a slower publish never overwrites a later one). A tree published
again unchanged uploads and writes nothing. Until ``catalog.json`` is written nothing a replica
reads has changed; after, every blob its entries name is there.

**Serving** (:func:`open_s3_source`) reads ``catalog.json``, checks it (checksum, shape, the
folder rules) and serves it; a :class:`~skills_core.sources._background.Refresher` then asks
for it again every ``interval`` with ``If-None-Match`` on its ETag (a 304 costs no body), and a
changed document is checked in that thread and offered to the source, which swaps it in whole at
the next listing, refusing a generation older than the one it serves. Files are read by digest
(``GET blobs/sha256/<hex>``) and checked before they are served. A store that cannot be reached
leaves the last good catalog served: the refresher logs the failure once and the recovery once,
and reads fail cleanly (``-32603``) until it answers.

**Garbage collection** (:func:`collect_garbage`, ``publish --gc-grace SECONDS``): a blob is
deleted when no catalog a replica may still serve refers to it and it is older than the grace.
A catalog may still be served while it is current or was replaced less than ``grace`` seconds
ago (the time its successor's history document was written), so the grace must be longer than
any replica's refresh interval plus the longest outage a replica should survive. Times are the
store's own (``Last-Modified``; "now" is that of an empty ``gc-clock`` object written first),
never this machine's clock. History documents replaced longer
ago than the grace are deleted too.

**Credentials and endpoint.** The endpoint is ``--s3-endpoint`` or the standard
``AWS_ENDPOINT_URL``; credentials and region come from the standard AWS environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``, web
identity, container and instance metadata), and, when ``boto3`` is installed and a profile is
named (``AWS_PROFILE``) or no key is in the environment but ``~/.aws`` exists, from boto3's whole
chain (profiles, SSO). No message of this module holds a secret: errors are reported by kind and
object key, with the library's text cut to its first line.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, final

from ..digest import compute_digest
from ..server.model import PublishedSkill
from ..spec import DIGEST_PREFIX
from ._background import CachingFetcher, Refresher, refresh_interval
from .published import (
    CatalogDocument,
    CatalogError,
    blob_key,
    decode_document,
    document_from_catalog,
    encode_document,
    paused_gc,
    same_content,
)
from .store import BlobError, CatalogChecker, StoreSource, StoreState
from .urls import S3URL

if TYPE_CHECKING:
    from ..server.catalog import Catalog

__all__ = [
    "StoreError",
    "Bucket",
    "PublishResult",
    "GarbageReport",
    "open_s3_source",
    "load_s3_state",
    "publish",
    "collect_garbage",
]

CATALOG: Final = "catalog.json"
HISTORY: Final = "catalogs/"
BLOBS: Final = "blobs/sha256/"
#: An empty object written to read the store's clock (garbage collection).
_CLOCK: Final = "gc-clock"
#: Uploads made at once by a publish.
PUBLISH_CONCURRENCY: Final = 16
#: How long one request may take, and retries of failed reads, before a failure is reported.
_TIMEOUT: Final = "30s"
_CONNECT_TIMEOUT: Final = "5s"
_MAX_RETRIES: Final = 2
_RETRY_TIMEOUT: Final = timedelta(seconds=10)


class StoreError(Exception):
    """The bucket could not be used: unreachable, refused, missing, or not a catalog.

    Attributes:
        message: One line for people (no secret in it).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Source(Protocol):
    """What :func:`publish` reads a tree through (a folder's or a git commit's source)."""

    def scan(self) -> Catalog: ...

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None: ...

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None: ...


def _reason(exc: BaseException) -> str:
    """The first line of a library error, cut short: what failed, never the debug dump."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    return text if len(text) <= 300 else text[:297] + "..."


@final
class Bucket:
    """The objects under one ``s3://BUCKET/PREFIX`` (a thin layer over ``obstore``).

    Args:
        url: Where.
        endpoint: The S3 endpoint URL (``http://127.0.0.1:8333``), or None for the
            environment's (``AWS_ENDPOINT_URL``) or AWS's own.

    Raises:
        StoreError: ``obstore`` is not installed, or the endpoint is malformed.
    """

    __slots__ = ("_obstore", "_store", "url")

    def __init__(self, url: S3URL, *, endpoint: str | None = None) -> None:
        try:
            import obstore  # noqa: PLC0415 - the optional extra, only here
            from obstore.store import S3Store  # noqa: PLC0415
        except ImportError:
            raise StoreError(
                "s3:// sources need obstore, which comes with the s3 extra: "
                "pip install 'skills-core[s3]'"
            ) from None
        self.url = url
        self._obstore = obstore
        endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL") or None
        if endpoint is not None and (
            not endpoint.startswith(("http://", "https://")) or "@" in endpoint
        ):
            raise StoreError(
                f"the S3 endpoint must be an http:// or https:// URL without credentials, "
                f"not {endpoint.split('@')[-1]!r}"
            )
        config: Any = {}
        if endpoint is not None:
            config["endpoint"] = endpoint
        if not os.environ.get("AWS_REGION") and not os.environ.get("AWS_DEFAULT_REGION"):
            config["region"] = "us-east-1"  # what AWS assumes; S3-compatible stores ignore it
        client: Any = {
            "timeout": _TIMEOUT,
            "connect_timeout": _CONNECT_TIMEOUT,
            "allow_http": endpoint is not None and endpoint.startswith("http://"),
        }
        retry: Any = {"max_retries": _MAX_RETRIES, "retry_timeout": _RETRY_TIMEOUT}
        try:
            self._store = S3Store(
                url.bucket,
                prefix=url.prefix or None,
                config=config,
                client_options=client,
                retry_config=retry,
                credential_provider=_credential_provider(),
            )
        except Exception as exc:  # noqa: BLE001 - obstore's configuration errors
            raise StoreError(f"cannot use {url}: {_reason(exc)}") from None

    def where(self, key: str) -> str:
        """``s3://BUCKET/PREFIX/key``, for messages."""
        return f"{self.url}/{key}"

    def get(self, key: str, *, etag: str | None = None) -> tuple[bytes, str | None] | None:
        """``(bytes, ETag)`` of ``key``; None when ``etag`` is given and still current.

        Raises:
            KeyError: there is no such object.
            StoreError: the store failed.
        """
        exceptions = self._obstore.exceptions
        try:
            options: Any = {"if_none_match": etag} if etag is not None else None
            result = self._obstore.get(self._store, key, options=options)
            data = result.bytes().to_bytes()
            return data, result.meta.get("e_tag")
        except exceptions.NotModifiedError:
            return None
        except (FileNotFoundError, exceptions.NotFoundError):
            raise KeyError(key) from None
        except Exception as exc:  # noqa: BLE001 - every other failure is the store's
            raise StoreError(f"cannot read {self.where(key)}: {_reason(exc)}") from None

    def put(self, key: str, data: bytes, *, mode: str | dict[str, str] = "overwrite") -> bool:
        """Write ``key``; False when ``mode`` (``create``, or ``{"e_tag": ...}``) refused it.

        Raises:
            StoreError: the store failed.
        """
        exceptions = self._obstore.exceptions
        try:
            self._obstore.put(self._store, key, data, mode=cast(Any, mode))
        except (exceptions.AlreadyExistsError, exceptions.PreconditionError):
            return False
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"cannot write {self.where(key)}: {_reason(exc)}") from None
        return True

    def list(self, prefix: str) -> Iterator[tuple[str, int, datetime]]:
        """``(key, size, last modified)`` of every object under ``prefix``.

        Raises:
            StoreError: the store failed.
        """
        try:
            for chunk in self._obstore.list(self._store, prefix=prefix, chunk_size=1000):
                for meta in chunk:
                    yield meta["path"], meta["size"], meta["last_modified"]
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"cannot list {self.where(prefix)}: {_reason(exc)}") from None

    def modified(self, key: str) -> datetime:
        """When ``key`` was last written, by the store's clock.

        Raises:
            StoreError: the store failed, or there is no such object.
        """
        try:
            return self._obstore.head(self._store, key)["last_modified"]
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"cannot look at {self.where(key)}: {_reason(exc)}") from None

    def delete(self, keys: Sequence[str]) -> None:
        """Delete ``keys``.

        Raises:
            StoreError: the store failed.
        """
        try:
            for start in range(0, len(keys), 1000):
                self._obstore.delete(self._store, list(keys[start : start + 1000]))
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"cannot delete under {self.url}: {_reason(exc)}") from None


def _credential_provider() -> Any:
    """boto3's whole credential chain when it is installed and a profile is meant; else None
    (obstore's own chain: the environment, web identity, container and instance metadata)."""
    profile = os.environ.get("AWS_PROFILE")
    config_dir = os.path.expanduser("~/.aws")
    if not profile and (os.environ.get("AWS_ACCESS_KEY_ID") or not os.path.isdir(config_dir)):
        return None
    try:
        from obstore.auth.boto3 import Boto3CredentialProvider  # noqa: PLC0415
    except ImportError:  # boto3 is not installed: obstore's chain it is
        return None
    return Boto3CredentialProvider()


def _history_key(generation: int) -> str:
    return f"{HISTORY}{generation:020d}.json"


# --- serving -------------------------------------------------------------------------------------


@final
class _Replica:
    """What a serving replica keeps: the bucket, its checker, the ETag and generation read."""

    def __init__(self, bucket: Bucket, log: Callable[[str], None]) -> None:
        self.bucket = bucket
        self.log = log
        self.checker = CatalogChecker()
        self.etag: str | None = None
        self.generation = -1
        self.failing: str | None = None
        self.source: StoreSource | None = None

    def first(self) -> StoreState:
        try:
            got = self.bucket.get(CATALOG)
        except KeyError:
            raise StoreError(
                f"nothing is published at {self.bucket.url} (no {CATALOG}): run "
                f"`skills-core publish ROOT {self.bucket.url}` first"
            ) from None
        assert got is not None
        data, self.etag = got
        try:
            # One pause for both (see paused_gc), the document freed before it ends: a
            # collection would otherwise walk it once the collector is back.
            with paused_gc():
                document = decode_document(data)
                state = self.checker.state(document)
                del document
        except CatalogError as exc:
            raise StoreError(f"{self.bucket.where(CATALOG)}: {exc.message}") from None
        self.generation = state.generation
        return state

    def check(self) -> None:
        """One look at ``catalog.json`` (the refresher's thread)."""
        bucket = self.bucket
        try:
            got = bucket.get(CATALOG, etag=self.etag)
        except (StoreError, KeyError) as exc:
            reason = exc.message if isinstance(exc, StoreError) else f"{CATALOG} is gone"
            if self.failing is None:
                self.log(f"{reason}; still serving generation {self.generation}")
            self.failing = reason
            return
        if self.failing is not None:
            self.log(f"{bucket.url} answers again")
            self.failing = None
        if got is None:
            return
        data, etag = got
        with paused_gc():  # one pause for both, as in first()
            state = self._check(data, etag)
        if state is None:
            return
        self.generation = state.generation
        assert self.source is not None
        self.source.offer(state)

    def _check(self, data: bytes, etag: str | None) -> StoreState | None:
        """The state of a catalog read by check(), or None (refused, or not newer: logged)."""
        bucket = self.bucket
        try:
            document = decode_document(data)
        except CatalogError as exc:
            self.log(f"refused {bucket.where(CATALOG)}: {exc.message}")
            self.etag = etag
            return None
        self.etag = etag
        generation = document.generation
        if generation <= self.generation:
            if generation < self.generation:
                self.log(
                    f"refused generation {generation} of {bucket.url}: generation "
                    f"{self.generation} is served (a replica never goes back)"
                )
            return None
        try:
            return self.checker.state(document)
        except CatalogError as exc:
            self.log(f"refused generation {generation} of {bucket.url}: {exc.message}")
            return None

    def fetch(self, digest: str, size: int) -> bytes:
        key = blob_key(digest)
        try:
            got = self.bucket.get(key)
        except KeyError:
            raise BlobError(self.bucket.where(key), "there is no such object") from None
        except StoreError as exc:
            raise BlobError(self.bucket.where(key), exc.message) from None
        assert got is not None
        return got[0]

    def describe(self, digest: str) -> str:
        return self.bucket.where(blob_key(digest))


def open_s3_source(
    url: S3URL,
    *,
    endpoint: str | None = None,
    ttl_ms: int = 300_000,
    log: Callable[[str], None] = lambda message: None,
    refresh: bool = True,
) -> StoreSource:
    """A source serving the catalog published at ``url``, kept current (see the module docstring).

    Args:
        url: Where the catalog is.
        endpoint: The S3 endpoint URL, or None for the environment's.
        ttl_ms: The server's ``ttlMs``: a new publish is served within it.
        log: Where to say what the operator should know (one line each).
        refresh: Look for new publishes in a background thread (stopped by ``close()``).

    Raises:
        StoreError: the bucket cannot be read, holds no catalog, or its catalog is unreadable.
    """
    replica = _Replica(Bucket(url, endpoint=endpoint), log)
    state = replica.first()
    fetcher = CachingFetcher(replica.fetch, replica.describe)
    refresher: Refresher | None = None
    if refresh:
        refresher = Refresher(
            replica.check, refresh_interval(ttl_ms), name=f"skills-core {url}", log=log
        )
    source = StoreSource(
        state, fetcher, log=log, close=None if refresher is None else refresher.close
    )
    replica.source = source
    if refresher is not None:
        refresher.start()
    return source


def load_s3_state(url: S3URL, *, endpoint: str | None = None) -> StoreState:
    """The checked state of the catalog at ``url`` now (``manifest``, ``validate``).

    Raises:
        StoreError: as :func:`open_s3_source`.
    """
    return _Replica(Bucket(url, endpoint=endpoint), lambda message: None).first()


# --- publishing ----------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class PublishResult:
    """What a publish did.

    Attributes:
        generation: The generation now current (this publish's, or the unchanged one).
        changed: False when the tree was already published (nothing was written).
        uploaded: Files uploaded (the others were stored already).
        uploaded_bytes: Their bytes.
        skills: Skills published.
        omitted: Skill folders left out (``manifest`` says why).
        superseded: A later publish was committed first; this one is not current.
    """

    generation: int
    changed: bool
    uploaded: int
    uploaded_bytes: int
    skills: int
    omitted: int
    superseded: bool = False


def _empty_dirs(source: _Source, skill: PublishedSkill) -> list[str]:
    """The folders of ``skill`` that hold no file (directory reads list them)."""
    holding = {""}
    for path in skill.files.values():
        parts = path.split("/")
        holding.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
    empty: list[str] = []
    todo = [""]
    while todo:
        folder = todo.pop()
        for name, is_dir in source.list_directory(skill, folder) or ():
            if is_dir:
                child = f"{folder}/{name}" if folder else name
                if child not in holding:
                    empty.append(child)
                todo.append(child)
    return empty


def publish(
    source: _Source,
    url: S3URL,
    *,
    scheme: str,
    endpoint: str | None = None,
    concurrency: int = PUBLISH_CONCURRENCY,
    gc_grace: float | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> PublishResult:
    """Publish what ``source`` serves at ``url`` (see the module docstring).

    Args:
        source: The tree: a folder's source, or a git commit's.
        url: Where to publish.
        scheme: The URI scheme of its skills.
        endpoint: The S3 endpoint URL, or None for the environment's.
        concurrency: Uploads at once.
        gc_grace: Collect garbage after publishing, with this grace in seconds (None: do not).
        log: Where to say what the operator should know.

    Raises:
        StoreError: the bucket failed, or a file changed while it was published (nothing was
            committed then).
    """
    bucket = Bucket(url, endpoint=endpoint)
    catalog = source.scan()
    dirs = {skill.uri: _empty_dirs(source, skill) for skill in catalog.skills}
    current: CatalogDocument | None = None
    etag: str | None = None
    try:
        got = bucket.get(CATALOG)
        assert got is not None
        data, etag = got
        current = decode_document(data)
    except KeyError:
        pass
    except CatalogError as exc:
        log(f"{bucket.where(CATALOG)} is unreadable ({exc.message}); publishing over it")
    document = document_from_catalog(
        catalog, generation=current.generation if current else 0, scheme=scheme, dirs=dirs
    )
    counts = (len(catalog.skills), len(catalog.omitted))
    if current is not None and same_content(current, document):
        if gc_grace is not None:
            collect_garbage(bucket, gc_grace, log=log)
        return PublishResult(current.generation, False, 0, 0, *counts)
    uploaded, uploaded_bytes = _upload_blobs(bucket, source, catalog, concurrency)
    generation = 1 + max(
        current.generation if current else 0,
        max((_generation_of(key) for key, _, _ in bucket.list(HISTORY)), default=0),
    )
    for _ in range(8):  # another publisher may take a generation meanwhile: take the next one
        document = CatalogDocument(
            generation=generation, scheme=scheme, skills=document.skills, omitted=document.omitted
        )
        encoded = encode_document(document)
        if bucket.put(_history_key(generation), encoded, mode="create"):
            break
        generation += 1
    else:
        raise StoreError(f"{bucket.url}: other publishes keep taking the next generation")
    superseded = not _commit(bucket, encoded, generation, etag, log)
    if gc_grace is not None:
        collect_garbage(bucket, gc_grace, log=log)
    return PublishResult(generation, True, uploaded, uploaded_bytes, *counts, superseded)


def _generation_of(key: str) -> int:
    name = key.rpartition("/")[2].removesuffix(".json")
    return int(name) if name.isdigit() else 0


def _commit(
    bucket: Bucket, encoded: bytes, generation: int, etag: str | None, log: Callable[[str], None]
) -> bool:
    """Write ``catalog.json`` unless a later generation is there; False when one is."""
    for _ in range(8):
        mode: str | dict[str, str] = "create" if etag is None else {"e_tag": etag}
        if bucket.put(CATALOG, encoded, mode=mode):
            return True
        try:
            got = bucket.get(CATALOG)
            assert got is not None
            data, etag = got
            there = decode_document(data).generation
        except KeyError:
            etag = None
            continue
        except CatalogError:
            there = -1
        if there > generation:
            log(f"generation {there} was committed first; generation {generation} is not current")
            return False
    raise StoreError(f"{bucket.where(CATALOG)} keeps changing; publish again")


def _upload_blobs(
    bucket: Bucket, source: _Source, catalog: Catalog, concurrency: int
) -> tuple[int, int]:
    """Upload every file of ``catalog`` not stored yet; ``(files, bytes)`` uploaded."""
    stored = {key.rpartition("/")[2]: size for key, size, _ in bucket.list(BLOBS)}
    wanted: dict[str, tuple[PublishedSkill, str, int]] = {}
    for skill in catalog.skills:
        entry = skill.entry
        for uri, path in skill.files.items():
            resource = entry.resource(uri)
            assert resource is not None
            hex_digest = resource.digest[len(DIGEST_PREFIX) :]
            if stored.get(hex_digest) != resource.size and resource.digest not in wanted:
                wanted[resource.digest] = (skill, path, resource.size)

    def upload(item: tuple[str, tuple[PublishedSkill, str, int]]) -> int:
        digest, (skill, path, size) = item
        data = source.read(skill, path)
        if data is None or len(data) != size or compute_digest(data) != digest:
            raise StoreError(
                f"{skill.folder}/{path} changed while it was published; nothing was committed: "
                "publish again"
            )
        bucket.put(blob_key(digest), data)
        return size

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        sizes = list(pool.map(upload, wanted.items()))
    return len(sizes), sum(sizes)


# --- garbage collection --------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class GarbageReport:
    """What a collection deleted.

    Attributes:
        blobs: Files no catalog still served refers to, older than the grace.
        catalogs: History documents replaced longer ago than the grace.
        kept_generations: The generations whose files were kept.
    """

    blobs: int
    catalogs: int
    kept_generations: tuple[int, ...]


def collect_garbage(
    bucket: Bucket, grace: float, *, log: Callable[[str], None] = lambda message: None
) -> GarbageReport:
    """Delete what no replica may still need (see the module docstring).

    Raises:
        StoreError: the bucket failed, or holds no readable current catalog.
    """
    if grace < 0:
        raise ValueError("the grace must not be negative")
    bucket.put(_CLOCK, b"")  # now, by the store's clock: when it says this was written
    now = bucket.modified(_CLOCK)
    horizon = now - timedelta(seconds=grace)
    history = sorted((_generation_of(key), modified) for key, _, modified in bucket.list(HISTORY))
    try:
        got = bucket.get(CATALOG)
        assert got is not None
        current = decode_document(got[0])
    except (KeyError, CatalogError) as exc:
        raise StoreError(f"{bucket.where(CATALOG)} is not a readable catalog ({exc})") from None
    # A generation may still be served while current, or if replaced after the horizon.
    replaced: dict[int, datetime] = {
        older: successor_written
        for (older, _), (_, successor_written) in itertools.pairwise(history)
    }
    kept = sorted(
        {current.generation}
        | {g for g, _ in history if g >= current.generation or replaced.get(g, now) > horizon}
    )
    referenced = set(_digests(current))
    for generation in kept:
        if generation == current.generation:
            continue
        try:
            got = bucket.get(_history_key(generation))
            assert got is not None
            referenced.update(_digests(decode_document(got[0])))
        except (KeyError, CatalogError) as exc:
            raise StoreError(
                f"cannot read generation {generation} to collect garbage safely ({exc})"
            ) from None
    doomed = [
        key
        for key, _, modified in bucket.list(BLOBS)
        if DIGEST_PREFIX + key.rpartition("/")[2] not in referenced and modified < horizon
    ]
    old_history = [_history_key(g) for g, _ in history if g not in kept]
    bucket.delete(doomed + old_history)
    if doomed or old_history:
        log(f"collected {len(doomed)} file(s) and {len(old_history)} old catalog(s)")
    return GarbageReport(len(doomed), len(old_history), tuple(kept))


def _digests(document: CatalogDocument) -> Iterator[str]:
    for record in document.skills:
        entry: Mapping[str, Any] = record.get("entry") or {}
        for resource in entry.get("resources") or ():
            if isinstance(resource, dict) and isinstance(resource.get("digest"), str):
                yield resource["digest"]
