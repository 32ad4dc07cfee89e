"""Source URLs: ``s3://BUCKET/PREFIX`` and ``git:PATH[@REF]`` (pure).

Theory of operation: the command line accepts, wherever it accepts a folder of skills, one of
these URLs; :func:`parse_source_url` says which it is (or that it is none, so the argument is a
folder). ``s3://BUCKET/PREFIX`` names the catalog ``PREFIX/catalog.json`` of an S3-compatible
bucket (the prefix may be empty; a trailing ``/`` is ignored). ``git:PATH[@REF]`` names the skills
of a commit of the local repository at ``PATH`` (bare or not): ``REF`` is a branch, a tag or a
commit, ``HEAD`` by default, and the last ``@`` of the URL separates it (a path that holds an
``@`` is written with its ref: ``git:/srv/a@b.git@HEAD``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, final

__all__ = ["S3URL", "GitURL", "parse_source_url", "is_source_url"]

#: Bucket names as S3-compatible stores accept them (the strictest common rule, plus ``_``
#: and upper case, which some stores allow).
_BUCKET_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,254}")


@final
@dataclass(frozen=True, slots=True)
class S3URL:
    """``s3://BUCKET/PREFIX``: a catalog in an S3-compatible bucket.

    Attributes:
        bucket: The bucket.
        prefix: The folder of the catalog inside it (``""``, or without leading or trailing ``/``).
    """

    bucket: str
    prefix: str

    def key(self, name: str) -> str:
        """The key of ``name`` under the prefix."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


@final
@dataclass(frozen=True, slots=True)
class GitURL:
    """``git:PATH[@REF]``: the skills of a commit of a local repository.

    Attributes:
        path: The repository (a working tree or a bare repository).
        ref: A branch, tag or commit (``HEAD`` by default).
    """

    path: str
    ref: str = "HEAD"

    def __str__(self) -> str:
        return f"git:{self.path}@{self.ref}"


def is_source_url(text: str) -> bool:
    """Whether ``text`` is meant as a source URL (``s3://...`` or ``git:...``), not a folder."""
    return text.startswith(("s3://", "git:"))


def parse_source_url(text: str) -> S3URL | GitURL | None:
    """Parse a source URL; None when ``text`` is not one (a folder).

    Raises:
        ValueError: it starts like one but is malformed (the message says how to write it).
    """
    if text.startswith("s3://"):
        bucket, _, prefix = text[5:].partition("/")
        prefix = prefix.strip("/")
        if _BUCKET_RE.fullmatch(bucket) is None:
            raise ValueError(f"{text!r} is not s3://BUCKET/PREFIX (the bucket name is missing)")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise ValueError(f"{text!r}: the prefix has an empty, '.' or '..' part")
        if any(ord(c) < 32 or c in "\\?#" for c in prefix):
            raise ValueError(f"{text!r}: the prefix holds a control character, '\\', '?' or '#'")
        return S3URL(bucket, prefix)
    if text.startswith("git:"):
        rest = text[4:]
        path, at, ref = rest.rpartition("@")
        if not at:
            path, ref = rest, "HEAD"
        if not path or not ref:
            raise ValueError(f"{text!r} is not git:PATH[@REF]")
        if ref.startswith("-") or any(ord(c) < 33 for c in ref):
            raise ValueError(f"{text!r}: {ref!r} is not a ref (a branch, tag or commit)")
        return GitURL(path, ref)
    return None
