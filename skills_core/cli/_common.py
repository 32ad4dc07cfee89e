"""What every ``skills-core`` command shares: exit codes, the error type, and output helpers.

Theory of operation: each command module imports this one and nothing of its siblings, so the
command line has no import cycle. A command reports a failure by raising :class:`CliError` with one
of the exit codes below (or by returning the code); :func:`skills_core.cli.main` writes the message
as one line on stderr. Text that came from a server or a skill folder reaches the terminal only
through :func:`skills_core.display.display` (docs/design.md#d11); :func:`error` applies it to
the whole message, so a caller may embed untrusted text in a message as it is, and
:func:`print_json` writes JSON through :func:`skills_core.display.display_json`.

====  ==================================================================================
0     ok
1     usage: bad arguments, an unknown or ambiguous skill name, an invalid folder (validate)
2     connection or protocol error: a server cannot start, dies, times out, breaks JSON-RPC
3     verification failure: size, digest, frontmatter, unlisted file, escaping reference
4     approval needed, refused or revoked (the message names what changed)
5     invalid or over-limit entry (including a skills/get answer for another URI)
====  ==================================================================================
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, TextIO

from ..display import display, display_json

if TYPE_CHECKING:
    from ..server.filesystem import FilesystemSource
    from ..sources.store import StoreSource

__all__ = [
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_CONNECTION",
    "EXIT_VERIFICATION",
    "EXIT_APPROVAL",
    "EXIT_INVALID_ENTRY",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "CliError",
    "error",
    "print_json",
    "open_source",
    "open_url_source",
    "source_note",
    "os_message",
    "read_regular_file",
    "terminal_width",
]

#: The narrowest width laid out for (see terminal_width).
MIN_WIDTH: Final = 40

EXIT_OK: Final = 0
EXIT_USAGE: Final = 1
EXIT_CONNECTION: Final = 2
EXIT_VERIFICATION: Final = 3
EXIT_APPROVAL: Final = 4
EXIT_INVALID_ENTRY: Final = 5
#: A bug in skills-core itself (``EX_SOFTWARE`` of BSD's sysexits.h); the message says to report it.
EXIT_INTERNAL: Final = 70
#: Interrupted by the user (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED: Final = 130


class CliError(Exception):
    """A failure to report as one line on stderr, with the exit code that classifies it."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def error(message: str) -> None:
    """Write ``skills-core: <message>`` to stderr as one line, every character made visible."""
    sys.stderr.write(f"skills-core: {display(message)}\n")
    sys.stderr.flush()


def print_json(document: object) -> None:
    """Write ``document`` to stdout as indented JSON (one document, then a newline).

    The JSON is exact and strict UTF-8; characters a terminal would obey (controls, bidi
    overrides, invisible characters) are written as ``\\u`` escapes (:func:`display_json`).
    """
    sys.stdout.write(display_json(document) + "\n")


def open_source(
    roots: Sequence[str],
    *,
    include_hidden: bool = False,
    exclude: Sequence[str] = (),
    index: str | None = None,
    s3_endpoint: str | None = None,
    ttl_ms: int = 300_000,
    follow: bool = False,
    log: Callable[[str], None] | None = None,
) -> FilesystemSource | StoreSource:
    """The source of ``roots``, or a CliError.

    ``roots`` is folders (a :class:`~skills_core.server.filesystem.FilesystemSource`), or one
    source URL, ``s3://BUCKET/PREFIX`` or ``git:PATH[@REF]`` (a
    :class:`~skills_core.sources.store.StoreSource`, see :func:`open_url_source`). The other
    keywords are the sources' own (``serve`` and ``manifest`` take them as options).
    """
    from ..sources.urls import is_source_url  # noqa: PLC0415 - only when used

    if any(is_source_url(root) for root in roots):
        if len(roots) != 1:
            raise CliError(f"a source URL is served alone, not with other roots: {' '.join(roots)}")
        return open_url_source(
            roots[0],
            include_hidden=include_hidden,
            exclude=exclude,
            s3_endpoint=s3_endpoint,
            ttl_ms=ttl_ms,
            follow=follow,
            log=log,
        )
    from ..server.filesystem import FilesystemSource  # noqa: PLC0415 - only when used

    try:
        return FilesystemSource(
            roots, include_hidden=include_hidden, exclude=exclude, index=index, log=log
        )
    except (OSError, ValueError) as exc:
        raise CliError(os_message(exc), EXIT_USAGE) from None


def open_url_source(
    url: str,
    *,
    include_hidden: bool = False,
    exclude: Sequence[str] = (),
    s3_endpoint: str | None = None,
    ttl_ms: int = 300_000,
    follow: bool = False,
    log: Callable[[str], None] | None = None,
) -> StoreSource:
    """The source of a URL: the catalog of an S3-compatible bucket, or a git commit's skills.

    Args:
        url: ``s3://BUCKET/PREFIX`` or ``git:PATH[@REF]``.
        include_hidden, exclude: What a git commit publishes (as for a folder).
        s3_endpoint: The S3 endpoint URL (else ``AWS_ENDPOINT_URL``, else AWS).
        ttl_ms: The server's ``ttlMs``: new publishes and commits are served within it.
        follow: Look for them in a background thread (``serve``); else one look.
        log: Where the source tells the operator something (default: stderr).

    Raises:
        CliError: the URL is malformed (exit 1), or the store cannot be read (exit 2).
    """
    from ..sources.git import GitError, open_git_source  # noqa: PLC0415 - only when used
    from ..sources.s3 import StoreError, open_s3_source  # noqa: PLC0415
    from ..sources.urls import GitURL, parse_source_url  # noqa: PLC0415

    say = log if log is not None else error
    try:
        parsed = parse_source_url(url)
        if isinstance(parsed, GitURL):
            return open_git_source(
                parsed,
                include_hidden=include_hidden,
                exclude=exclude,
                ttl_ms=ttl_ms,
                refresh=follow,
                log=say,
            )
        assert parsed is not None
        return open_s3_source(parsed, endpoint=s3_endpoint, ttl_ms=ttl_ms, refresh=follow, log=say)
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except GitError as exc:
        raise CliError(exc.message, EXIT_USAGE) from None
    except StoreError as exc:
        raise CliError(exc.message, EXIT_CONNECTION) from None


def source_note(source: object) -> str | None:
    """What a source wants said once it is open (a folder source's digest index), or None."""
    note = getattr(source, "index_note", None)
    return note if isinstance(note, str) else None


def os_message(exc: BaseException) -> str:
    """``path: reason`` for an OSError that names a file, else the exception's text."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc)


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """Read a regular file of at most ``limit`` bytes; a FIFO or a device never blocks this.

    The file is opened non-blocking (opening a FIFO that has no writer returns at once), its type
    is checked with ``fstat`` before anything is read, and nothing past ``limit`` is read.

    Raises:
        FileNotFoundError: there is no such file.
        OSError: it cannot be opened or read, is not a regular file, or is over ``limit`` bytes.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.fspath(path)} is not a regular file")
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise OSError(f"{os.fspath(path)} is larger than {limit:,} bytes")
    return data


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to (at least 40), or None when it is not one."""
    try:
        if not stream.isatty():
            return None
        return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, ValueError, OSError):
        return None
