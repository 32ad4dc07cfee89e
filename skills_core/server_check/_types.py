"""The values the live-server check trades in: calls, replies, bounds and the result.

Pure data (see :mod:`skills_core.server_check`); no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from ..check import ValidationReport
from ..entry import DEFAULT_LIMITS, Limits
from ..errors import quote_for_message
from ..host.policy import DEFAULT_LISTING_BYTES, DEFAULT_SERVER_BUDGET, HostPolicy
from ..jsonvalue import JSONValue
from ..messages import Era

__all__ = ["Call", "Reply", "CheckBounds", "ServerCheckResult", "INVALID_PARAMS"]

#: The code of an unknown skill, file or directory (ERR-01, ERR-02, ERR-03).
INVALID_PARAMS: Final = -32602


@final
@dataclass(frozen=True, slots=True)
class Call:
    """A request the check wants sent: ``method`` with ``params`` (``_meta`` included when modern).

    Attributes:
        method: The JSON-RPC method.
        params: The params, ready to send.
    """

    method: str
    params: dict[str, JSONValue]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """The answer to a :class:`Call`: a result, a JSON-RPC error, or no answer at all.

    Build one with :meth:`ok`, :meth:`error` or :meth:`failed`.

    Attributes:
        result: The ``result`` (any JSON value), when the server answered with one.
        error_code: The ``error.code``, when the server answered with an error.
        error_message: The ``error.message`` (server text).
        failure: Why no answer came (a timeout, a closed connection): the walk stops.
    """

    result: JSONValue = None
    error_code: int | None = None
    error_message: str = ""
    failure: str | None = None

    @classmethod
    def ok(cls, result: JSONValue) -> Reply:
        """A result."""
        return cls(result=result)

    @classmethod
    def error(cls, code: int, message: str = "") -> Reply:
        """A JSON-RPC error response."""
        return cls(error_code=code, error_message=message)

    @classmethod
    def failed(cls, reason: str) -> Reply:
        """No answer: ``reason`` says why (it is shown as the run's failure)."""
        return cls(failure=reason)

    def describe_error(self) -> str:
        """``error CODE ("message")``, for a message about an error answer."""
        text = f" ({quote_for_message(self.error_message, 200)})" if self.error_message else ""
        return f"error {self.error_code}{text}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CheckBounds:
    """How much of a server the check reads (see the module docstring, "Bounds").

    Attributes:
        limits: The per-skill limits: files past them are not read (ENTRY-17).
        max_entries: Entries read from the listing (an empty page counts as one).
        max_listing_bytes: Listing bytes (as a host counts them) of the entries kept.
        max_pages: Pages of one listing (``skills/list``, ``resources/list``, a directory).
        max_read_bytes: File bytes read from the server in all.
        max_directories: Directories read in all.
        max_directory_entries: Children of one directory looked at.
        max_probes: Files read that no entry lists (to see whether they are served).
    """

    limits: Limits = DEFAULT_LIMITS
    max_entries: int = 10_000
    max_listing_bytes: int = DEFAULT_LISTING_BYTES
    max_pages: int = 1_000
    max_read_bytes: int = DEFAULT_SERVER_BUDGET
    max_directories: int = 2_000
    max_directory_entries: int = 10_000
    max_probes: int = 100

    @classmethod
    def from_policy(cls, policy: HostPolicy) -> CheckBounds:
        """The bounds of a host with ``policy``: its limits, listing caps and read budget."""
        return cls(
            limits=policy.limits,
            max_entries=policy.max_entries,
            max_listing_bytes=policy.max_listing_bytes,
            max_read_bytes=policy.per_server_budget_bytes,
            max_directory_entries=policy.max_directory_entries,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerCheckResult:
    """What the check found about one server.

    Attributes:
        label: The label the server was checked under.
        era: The era spoken.
        report: One :class:`~skills_core.check.SkillReport` per listed entry (``path`` is the
            label, ``index`` the entry's place in the listing), and the server's own findings.
        failures: Why the check could not go on (a request with no answer): a failed run.
        requests: Requests answered.
        files_read: Files read and checked.
        bytes_read: Their bytes.
    """

    label: str
    era: Era
    report: ValidationReport
    failures: tuple[str, ...] = ()
    requests: int = 0
    files_read: int = 0
    bytes_read: int = 0
