"""Where a server's skills come from besides local folders: object stores and git repositories.

Theory of operation
-------------------
* :mod:`~skills_core.sources.published` (pure): the catalog document ``skills-core publish``
  writes (versioned canonical JSON with its own checksum).
* :mod:`~skills_core.sources.store` (pure): :class:`StoreSource`, a
  :class:`~skills_core.server.source.SkillSource` over stored states, checked by the folder rules
  (:class:`CatalogChecker`) and read by digest through a :class:`BlobFetcher`, every byte verified.
* :mod:`~skills_core.sources.urls` (pure): ``s3://BUCKET/PREFIX`` and ``git:PATH[@REF]``.
* :mod:`~skills_core.sources.s3`: S3-compatible buckets (publish, serve, collect garbage); the
  only module that imports ``obstore`` (the ``s3`` extra).
* :mod:`~skills_core.sources.git`: commits of local git repositories, through the ``git``
  command.
* :mod:`~skills_core.sources._background`: the bounded blob cache and the refresher thread the
  adapters share.

Nothing here is imported by the server or the command line unless a source URL is used.
"""

from __future__ import annotations

from .published import CatalogDocument as CatalogDocument
from .published import CatalogError as CatalogError
from .store import BlobError as BlobError
from .store import BlobFetcher as BlobFetcher
from .store import CatalogChecker as CatalogChecker
from .store import StoreSource as StoreSource
from .store import StoreState as StoreState
from .urls import S3URL as S3URL
from .urls import GitURL as GitURL
from .urls import parse_source_url as parse_source_url

__all__ = [
    "CatalogDocument",
    "CatalogError",
    "BlobError",
    "BlobFetcher",
    "CatalogChecker",
    "StoreSource",
    "StoreState",
    "GitURL",
    "S3URL",
    "parse_source_url",
]
