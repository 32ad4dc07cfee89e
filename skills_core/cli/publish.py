"""``skills-core publish``: upload what ``serve`` would publish to an S3-compatible bucket.

Theory of operation: the source is opened as ``serve`` opens it (a folder with the same walk,
options and rules, or a ``git:PATH[@REF]`` commit), and :func:`skills_core.sources.s3.publish`
stores its files under their digests and commits the catalog document last (see
:mod:`skills_core.sources.s3`); ``--gc-grace SECONDS`` then deletes what no catalog a replica may
still serve refers to. One line on stderr says what was done (``--json``: one object on stdout).
Exit 0 when published (or unchanged), 1 for a usage error, 2 when the bucket failed or a file
changed while it was published (nothing was committed then).
"""

from __future__ import annotations

import argparse

from ._common import (
    EXIT_CONNECTION,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    error,
    open_source,
    print_json,
)

__all__ = ["run_publish"]


def run_publish(args: argparse.Namespace) -> int:
    """Run ``skills-core publish SOURCE s3://BUCKET/PREFIX``; return the exit code."""
    from ..sources.s3 import StoreError, publish  # noqa: PLC0415 - only for this command
    from ..sources.urls import S3URL, parse_source_url  # noqa: PLC0415

    try:
        target = parse_source_url(args.target)
    except ValueError as exc:
        raise CliError(f"publish: {exc}", EXIT_USAGE) from None
    if not isinstance(target, S3URL):
        raise CliError(f"publish: the target must be s3://BUCKET/PREFIX, not {args.target!r}")
    if args.source.startswith("s3://"):
        raise CliError("publish: the source is a folder or git:PATH[@REF], not a bucket")
    source = open_source(
        [args.source],
        include_hidden=args.include_hidden,
        exclude=args.exclude,
        log=lambda message: error(f"publish: {message}"),
    )
    try:
        result = publish(
            source,
            target,
            scheme=source.scheme,
            endpoint=args.s3_endpoint,
            concurrency=args.concurrency,
            gc_grace=args.gc_grace,
            log=lambda message: error(f"publish: {message}"),
        )
    except StoreError as exc:
        raise CliError(f"publish: {exc.message}", EXIT_CONNECTION) from None
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
    if args.json:
        print_json(
            {
                "target": str(target),
                "generation": result.generation,
                "changed": result.changed,
                "uploaded": result.uploaded,
                "uploadedBytes": result.uploaded_bytes,
                "skills": result.skills,
                "omitted": result.omitted,
                "superseded": result.superseded,
            }
        )
    elif not result.changed:
        error(
            f"publish: unchanged: generation {result.generation} at {target} already publishes "
            f"these {result.skills} skill(s); nothing uploaded"
        )
    else:
        error(
            f"publish: generation {result.generation} at {target}: {result.skills} skill(s), "
            f"{result.omitted} left out (`skills-core manifest` says why); uploaded "
            f"{result.uploaded} file(s), {result.uploaded_bytes:,} bytes"
        )
    return EXIT_OK
