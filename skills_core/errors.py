"""One exception hierarchy for the whole library.

Theory of operation: every failure the library reports is a :class:`SkillsError`. Each error has

* ``kind``: a short, stable, machine-readable string. Where a family's kinds are a closed set a
  program branches on, ``kind`` is a member of a :class:`enum.StrEnum` that lists them
  (:class:`URIErrorKind`, :class:`VerificationKind`, :class:`FrontmatterErrorKind`,
  :class:`TransportErrorKind`); a :class:`ProtocolError`'s kind names the rule that was broken
  (``"invalid-transition"``, ``"no-common-version"``, ...), an open set documented where each is
  raised. Programs branch on ``kind`` and on the class, never on the message text;
* ``message`` (also ``str(err)``): one sentence a person can act on, naming the thing that was
  wrong (the URI, the field, the line) and what was expected.

The classes split the way the caller has to react:

* :class:`URIError`: a URI or relative reference that the library refuses (hostile or malformed);
* :class:`InvalidEntryError` / :class:`EntryOverLimitError`: a skill entry that must not be loaded;
* :class:`VerificationError`: bytes or frontmatter that do not match the entry the host holds;
* :class:`FrontmatterError`: SKILL.md text outside the supported YAML subset, with line and column;
* :class:`ProtocolError`: JSON-RPC traffic that breaks the protocol, either ours
  (:class:`LocalProtocolError`) or the peer's (:class:`RemoteProtocolError`);
* :class:`JsonRpcError`: the peer answered a request with a JSON-RPC error response;
* :class:`TransportError`: the connection itself failed (the process could not start, died, or a
  request timed out); raised by the I/O adapters only.

Errors never carry bytes from the peer beyond what the message quotes (truncated), so they are safe to
log and to show.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "SkillsError",
    "URIError",
    "URIErrorKind",
    "DigestFormatError",
    "VerificationError",
    "VerificationKind",
    "FrontmatterErrorKind",
    "TransportErrorKind",
    "EntryProblem",
    "InvalidEntryError",
    "EntryOverLimitError",
    "FrontmatterError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "JsonRpcError",
    "TransportError",
    "quote_for_message",
]


def quote_for_message(value: object, limit: int = 120) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters, for embedding peer data in messages.

    A value nested too deeply for ``repr`` (peer JSON can nest thousands of levels) is named by its
    type instead, so quoting never raises ``RecursionError``.
    """
    try:
        text = repr(value)
    except RecursionError:
        text = f"<{type(value).__name__} nested too deeply to show>"
    if len(text) > limit:
        return text[: limit - 3] + "..."
    return text


def _rebuild(cls: type[SkillsError], state: dict[str, Any]) -> SkillsError:
    err = cls.__new__(cls)
    Exception.__init__(err, state.get("message", ""))
    err.__dict__.update(state)
    return err


class SkillsError(Exception):
    """Root of every error this library raises.

    Attributes:
        kind: Stable machine-readable kind; see each subclass for its values.
        message: The human-readable explanation (also ``str(err)``).
    """

    kind: str
    message: str

    def __init__(self, message: str, *, kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructors do not survive the default Exception pickling.
        return (_rebuild, (type(self), dict(self.__dict__)))


class URIErrorKind(enum.StrEnum):
    """Why a URI or a relative reference was refused."""

    #: Not ``<scheme>://<skill-path>/SKILL.md`` (URI-02, URI-04, SIL-05).
    NOT_SKILL_MD = "not-skill-md"
    #: The scheme or overall URI structure is malformed.
    MALFORMED = "malformed"
    #: The authority (first skill-path segment) is empty or not a reg-name (SIL-27).
    BAD_AUTHORITY = "bad-authority"
    #: The final skill-path segment is not a valid skill name (URI-07).
    BAD_NAME = "bad-name"
    #: An empty path segment, e.g. ``a//b`` or a trailing slash (URI-23, SIL-08).
    EMPTY_SEGMENT = "empty-segment"
    #: A literal ``.`` or ``..`` segment where none is allowed.
    DOT_SEGMENT = "dot-segment"
    #: A ``..`` that would climb above the skill root (URI-19).
    ESCAPES_ROOT = "escapes-root"
    #: A reference starting with ``/`` (URI-20).
    ABSOLUTE_PATH = "absolute-path"
    #: A reference starting with ``//`` (URI-20).
    NETWORK_PATH = "network-path"
    #: A reference carrying a scheme other than the skill's own (URI-21, WG-02).
    SCHEME = "scheme"
    #: An absolute URI of the same scheme that is not inside the skill (URI-21).
    NOT_IN_SKILL = "not-in-skill"
    #: A query component (URI-24, SIL-03).
    QUERY = "query"
    #: A fragment where none is allowed (entry URIs, SIL-03).
    FRAGMENT = "fragment"
    #: ``%2e``, ``%2f``, ``%5c`` or an escaped control character (URI-22, SIL-01).
    ENCODED_SEPARATOR = "encoded-separator"
    #: A ``%`` not followed by two hexadecimal digits.
    BAD_ESCAPE = "bad-escape"
    #: A backslash, NUL, control, format or other forbidden character (URI-23, SIL-07).
    BAD_CHARACTER = "bad-character"
    #: The reference names a directory where a file was required, or the reverse.
    NOT_A_FILE = "not-a-file"
    #: Longer than the documented maximum URI length.
    TOO_LONG = "too-long"


class URIError(SkillsError, ValueError):
    """A skill URI or relative reference was refused.

    Attributes:
        kind: A :class:`URIErrorKind`.
        value: The offending URI or reference (exactly as given).
    """

    kind: URIErrorKind
    value: str

    def __init__(self, message: str, *, kind: URIErrorKind, value: str) -> None:
        super().__init__(message, kind=kind)
        self.value = value


class DigestFormatError(SkillsError, ValueError):
    """A digest string is not ``sha256:`` followed by 64 lowercase hexadecimal characters."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="bad-digest")


class VerificationKind(enum.StrEnum):
    """What kind of verification failed (spec, "Integrity and Verification")."""

    #: The byte length differs from the entry's ``size`` (VER-07).
    SIZE = "size"
    #: The SHA-256 of the bytes differs from the entry's ``digest`` (VER-06).
    DIGEST = "digest"
    #: A read, while acting on a skill, of a file the held entry does not list (HELD-04).
    UNLISTED = "unlisted"
    #: The SKILL.md frontmatter differs from the entry's ``frontmatter`` (VER-11).
    FRONTMATTER = "frontmatter"
    #: A ``resources/read`` result of the wrong shape (several items, wrong ``uri``, bad base64;
    #: VER-17). Treated like a digest mismatch.
    CONTENT = "content"


class VerificationError(SkillsError):
    """Content does not match the skill entry it was checked against.

    The spec treats every kind alike: the content MUST NOT be used, and the recovery is a refresh of
    the entry with ``skills/get`` (VER-08, VER-09, VER-16).

    Attributes:
        kind: A :class:`VerificationKind`.
        uri: The resource URI whose content failed, if known.
        expected: What the entry said (a size, a digest, ...), if applicable.
        actual: What the content had, if applicable.
    """

    kind: VerificationKind
    uri: str | None
    expected: object
    actual: object

    def __init__(
        self,
        message: str,
        *,
        kind: VerificationKind,
        uri: str | None = None,
        expected: object = None,
        actual: object = None,
    ) -> None:
        super().__init__(message, kind=kind)
        self.uri = uri
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryProblem:
    """One reason a skill entry is invalid.

    Attributes:
        code: Stable machine-readable code, e.g. ``"name-mismatch"`` or ``"too-many-resources"``.
        pointer: JSON pointer (RFC 6901) into the entry where the problem is (``""`` for the whole).
        message: Human-readable explanation.
        over_limit: True when this problem is a limit being exceeded rather than a malformation.
    """

    code: str
    pointer: str
    message: str
    over_limit: bool = False

    def __str__(self) -> str:
        where = self.pointer or "entry"
        return f"{where}: {self.message}"


class InvalidEntryError(SkillsError, ValueError):
    """A skill entry breaks the extension's rules and must not be loaded (ENTRY-07, SIL-12).

    Every problem found is reported, not only the first.

    Attributes:
        kind: ``"invalid-entry"`` (or ``"over-limit"`` on :class:`EntryOverLimitError`).
        uri: The entry's ``uri`` when it was a string, else ``None``.
        problems: Every :class:`EntryProblem` found, in document order.
    """

    default_kind: ClassVar[str] = "invalid-entry"
    uri: str | None
    problems: tuple[EntryProblem, ...]

    def __init__(self, problems: tuple[EntryProblem, ...], *, uri: str | None = None) -> None:
        if not problems:
            raise ValueError("InvalidEntryError needs at least one problem")
        subject = f"skill entry {uri}" if uri is not None else "skill entry"
        if len(problems) == 1:
            message = f"invalid {subject}: {problems[0]}"
        else:
            details = "; ".join(str(p) for p in problems)
            message = f"invalid {subject} ({len(problems)} problems): {details}"
        super().__init__(message, kind=self.default_kind)
        self.uri = uri
        self.problems = problems

    @property
    def over_limit(self) -> bool:
        """True when at least one problem is an exceeded limit."""
        return any(p.over_limit for p in self.problems)

    @property
    def malformed(self) -> bool:
        """True when at least one problem is a malformation (not a limit)."""
        return any(not p.over_limit for p in self.problems)


class EntryOverLimitError(InvalidEntryError):
    """A well-formed entry that exceeds the per-skill limits (512 resources, 16 MiB; ENTRY-21).

    Raised only when every problem is a limit, so that a caller can tell the user "this skill is too
    large for this host" apart from "this server sent a broken entry".
    """

    default_kind: ClassVar[str] = "over-limit"


class FrontmatterErrorKind(enum.StrEnum):
    """What is wrong with a SKILL.md frontmatter (:class:`FrontmatterError`)."""

    #: Not YAML of the supported subset at all (a located syntax error).
    SYNTAX = "syntax"
    #: A YAML construct this library refuses on purpose (anchors, aliases, tags, ...; docs/design.md#d3).
    UNSUPPORTED = "unsupported"
    #: A key given twice in one mapping, at any depth.
    DUPLICATE_KEY = "duplicate-key"
    #: Past a documented limit (size, nesting, key length, integer range).
    LIMIT = "limit"
    #: The bytes are not UTF-8 (or hold a character the subset forbids).
    ENCODING = "encoding"
    #: No frontmatter between ``---`` delimiters where one is needed.
    DELIMITER = "delimiter"
    #: Parsed, but not a mapping of the shape frontmatter must have.
    SCHEMA = "schema"


class FrontmatterError(SkillsError, ValueError):
    """SKILL.md frontmatter that cannot be extracted or is outside the supported YAML subset.

    Attributes:
        kind: A :class:`FrontmatterErrorKind` (a ``str``).
        line: 1-based line number in the SKILL.md text (``None`` when not tied to a line).
        column: 1-based column (``None`` when not tied to a column).
        reason: The one-line reason without the location prefix.
    """

    kind: FrontmatterErrorKind
    line: int | None
    column: int | None
    reason: str

    def __init__(
        self,
        reason: str,
        *,
        kind: str,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        if line is None:
            message = f"frontmatter: {reason}"
        elif column is None:
            message = f"frontmatter line {line}: {reason}"
        else:
            message = f"frontmatter line {line}, column {column}: {reason}"
        super().__init__(message, kind=FrontmatterErrorKind(kind))
        self.line = line
        self.column = column
        self.reason = reason


class ProtocolError(SkillsError):
    """JSON-RPC or MCP traffic that breaks the protocol.

    Not raised directly: see :class:`LocalProtocolError` (we or our caller broke it) and
    :class:`RemoteProtocolError` (the peer broke it).

    Attributes:
        rpc_code: The JSON-RPC error code an adapter should answer with, when an answer is due.
    """

    rpc_code: int

    def __init__(self, message: str, *, kind: str, rpc_code: int = -32603) -> None:
        if type(self) is ProtocolError:
            raise TypeError("raise LocalProtocolError or RemoteProtocolError, not ProtocolError")
        super().__init__(message, kind=kind)
        self.rpc_code = rpc_code


class LocalProtocolError(ProtocolError):
    """The caller asked the library to do something the protocol forbids."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids."""


class JsonRpcError(SkillsError):
    """The peer answered a request with a JSON-RPC error response.

    This is not a protocol violation: ``-32602`` for an unknown skill is a normal answer.

    Attributes:
        kind: ``"error-response"``.
        rpc_code: The ``error.code`` the peer sent.
        data: The ``error.data`` the peer sent, or ``None``.
        method: The method of the request that failed.
        rpc_message: The ``error.message`` the peer sent (untrusted text), or the whole message
            when it was not given.
    """

    rpc_code: int
    data: object
    method: str
    rpc_message: str

    def __init__(
        self,
        message: str,
        *,
        rpc_code: int,
        method: str,
        data: object = None,
        rpc_message: str | None = None,
    ) -> None:
        super().__init__(message, kind="error-response")
        self.rpc_code = rpc_code
        self.method = method
        self.data = data
        self.rpc_message = message if rpc_message is None else rpc_message


class TransportErrorKind(enum.StrEnum):
    """Why a connection to a peer failed (:class:`TransportError`)."""

    #: The server process could not be started.
    SPAWN_FAILED = "spawn-failed"
    #: The connection could not be made (refused, unreachable, TLS handshake failed).
    CONNECT_FAILED = "connect-failed"
    #: The peer went away (exited, closed its side, reset the connection).
    CLOSED = "closed"
    #: A request got no answer in time.
    TIMEOUT = "timeout"
    #: The peer broke JSON-RPC or the transport's framing badly enough to give the connection up.
    PROTOCOL = "protocol"
    #: An HTTP error status without a JSON-RPC error in the body (:class:`HttpStatusError`).
    HTTP_STATUS = "http-status"
    #: A redirect that is not followed (another origin, a method-changing status, too many hops).
    REDIRECT = "redirect"


class TransportError(SkillsError):
    """The connection to a peer failed: it could not start or be made, it died, or timed out.

    Attributes:
        kind: A :class:`TransportErrorKind` (a ``str``: ``err.kind == "timeout"`` holds).
    """

    kind: TransportErrorKind

    def __init__(self, message: str, *, kind: str) -> None:
        """Raises ``ValueError`` for a ``kind`` that is not a :class:`TransportErrorKind`."""
        super().__init__(message, kind=TransportErrorKind(kind))
