"""What every ``skills-core`` command shares: exit codes, the error type, and output helpers.

Theory of operation: each command module imports this one and nothing of its siblings, so the
command line has no import cycle. A command reports a failure by raising :class:`CliError` with one
of the exit codes below (or by returning the code); :func:`skills_core.cli.main` writes the message
as one line on stderr. Text that came from a server or a skill folder reaches the terminal only
through :func:`skills_core.display.display` (DESIGN.md decision 11); :func:`error` applies it to
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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, TextIO

from ..display import display, display_json

if TYPE_CHECKING:
    from ..server.filesystem import FilesystemSource

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
) -> FilesystemSource:
    """A :class:`~skills_core.server.filesystem.FilesystemSource` over ``roots``, or a CliError.

    The keywords are the source's own (``serve`` and ``manifest`` take them as options).
    """
    from ..server.filesystem import FilesystemSource  # noqa: PLC0415 - only when used

    try:
        return FilesystemSource(roots, include_hidden=include_hidden, exclude=exclude, index=index)
    except (OSError, ValueError) as exc:
        raise CliError(os_message(exc), EXIT_USAGE) from None


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
