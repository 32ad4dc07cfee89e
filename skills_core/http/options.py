"""What a :class:`~skills_core.adapters.asgi.SkillsApp` is told: the HTTP settings and defaults.

Theory of operation: :class:`HttpOptions` is a frozen value checked when it is made; its ``Host``
and ``Origin`` allow-lists are compiled then, once, into sets the request checks
(:mod:`skills_core.http.server`) look names up in. Every default is the safe one
(docs/requirements.md#http-security): the loopback names only, no CORS, a 4 MiB body, 30 seconds to send it.

The bounds on what clients can hold are here too: how many large answers a worker makes and sends
at once and how many requests may wait for one (:data:`LARGE_ANSWER_BYTES` says what is large),
how long a response may wait for a client that takes nothing, and the deadlines for a request's
head and for an idle connection, which the ASGI server enforces
(:mod:`skills_core.adapters.uvicorn_http` does for uvicorn), as it does the time requests in
flight have to finish when the server stops. Whether ``/metrics`` is answered is a setting too
(the probes are :mod:`skills_core.http.probes`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias, final

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_SESSION_TTL",
    "DEFAULT_SEND_TIMEOUT",
    "DEFAULT_HEAD_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_LARGE_ANSWERS",
    "DEFAULT_LARGE_ANSWER_QUEUE",
    "DEFAULT_GRACEFUL_TIMEOUT",
    "LARGE_ANSWER_BYTES",
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "Scope",
    "HttpOptions",
]

#: An ASGI connection scope (``http``, ``lifespan``, ``websocket``).
Scope: TypeAlias = MutableMapping[str, Any]

#: The endpoint's path when none is given.
DEFAULT_PATH: Final = "/mcp"
#: Largest request body: 4 MiB, the Python SDK's cap. A request is small (a URI, a cursor); the
#: largest legitimate one is far below this.
DEFAULT_MAX_BODY_BYTES: Final = 4 << 20
#: Seconds a client has to send a whole body once its headers arrived (a slow body is cut off).
DEFAULT_BODY_TIMEOUT: Final = 30.0
#: Seconds a legacy session id stays valid: a day. After that the client gets 404 and, as
#: 2025-11-25 requires, initializes again.
DEFAULT_SESSION_TTL: Final = 24 * 3600
#: Seconds a response may wait for the client to take more of it (a write that makes no
#: progress); then the response is ended and the connection closed.
DEFAULT_SEND_TIMEOUT: Final = 30.0
#: Seconds a client has to send a whole request head (request line and headers), counted from
#: the moment the connection opened or, on a kept-alive connection, from the head's first byte.
DEFAULT_HEAD_TIMEOUT: Final = 10.0
#: Seconds a kept-alive connection may stay idle after an answer (uvicorn's own default).
DEFAULT_IDLE_TIMEOUT: Final = 5.0
#: Large answers a worker makes and sends at once. Each costs up to about 62 MB while it is made
#: (a 16 MiB file: its bytes, their base64, the response around it) and 22.4 MB while it is sent.
DEFAULT_MAX_LARGE_ANSWERS: Final = 4
#: Requests that may wait for a large answer's turn; past them, 503 with ``Retry-After``.
DEFAULT_LARGE_ANSWER_QUEUE: Final = 64
#: An answer over this many bytes is large: it is sent in pieces of this size (so the ASGI
#: server's flow control holds the writer), and it takes one of the ``max_large_answers`` turns.
#: A read of a file read in a worker thread (listed larger than 256 KiB) takes its turn before
#: the file is read; a smaller answer, made on the loop, once it is made.
LARGE_ANSWER_BYTES: Final = 64 << 10
#: Seconds requests in flight have to finish when the server is told to stop (SIGTERM); then
#: the ones left are ended (see :mod:`skills_core.adapters.uvicorn_http`).
DEFAULT_GRACEFUL_TIMEOUT: Final = 5.0
#: Host names allowed by default, any port (DNS-rebinding protection for a loopback server).
LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
#: Origins allowed by default: pages served from the loopback names, any port.
LOOPBACK_ORIGINS: Final = ("http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*")

_FOREVER: Final = float("inf")

# --- the options ------------------------------------------------------------------------------

# A request's Host or Origin is parsed whole before it is looked up (parse_authority,
# parse_origin), and refused when anything is left over: only the names on the list, exactly,
# get through. RFC 3986 §3.2.2: host = IP-literal / IPv4address / reg-name. An IPv4address is
# also a reg-name by its characters, so one rule covers both; an IPv6 literal is checked by
# ``ipaddress`` too.
_REG_NAME: Final = r"(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})+"
_IP_LITERAL: Final = r"\[(?:(?P<ipv6>[0-9a-f:.]+)|v[0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]"
#: ``host [":" port]`` with a port of digits (a Host value; an origin after its ``scheme://``).
_AUTHORITY: Final = re.compile(
    rf"(?P<host>{_IP_LITERAL}|{_REG_NAME})(?::(?P<port>[0-9]{{1,5}}))?", re.ASCII
)
#: The host of a pattern that allows any port: ``name`` or ``name:*``.
_ANY_PORT: Final = re.compile(rf"(?P<host>{_IP_LITERAL}|{_REG_NAME})(?::\*)?", re.ASCII)
_SCHEMES: Final = ("http", "https")


def _host_of(match: re.Match[str] | None) -> str | None:
    """The host a match of :data:`_AUTHORITY` or :data:`_ANY_PORT` found, if it is well-formed."""
    if match is None:
        return None
    ipv6 = match["ipv6"]
    if ipv6 is not None:
        try:
            ipaddress.IPv6Address(ipv6)
        except ValueError:
            return None
    return match["host"]


def parse_authority(text: str) -> tuple[str, int | None] | None:
    """``("example.com", 8080)`` from ``"Example.com:8080"``: a ``Host`` value, strictly.

    The whole text must be ``host [":" port]`` (RFC 3986 §3.2.2-3, RFC 9110 §7.2): the host an
    IP literal in brackets, an IPv4 address or a registered name, lowercased; the port one to
    five digits, at most 65535, or None when absent. Anything else (a user part, a path, a port
    that is not a number, text after the brackets of an IP literal, spaces) is None.
    """
    lowered = text.lower()
    match = _AUTHORITY.fullmatch(lowered)
    host = _host_of(match)
    if host is None or match is None:
        return None
    port = match["port"]
    if port is None:
        return host, None
    number = int(port)
    return (host, number) if number <= 0xFFFF else None


def parse_origin(text: str) -> tuple[str, str, int | None] | None:
    """``("https", "app.example", None)`` from ``"https://App.example"``: an ``Origin``, strictly.

    An origin is ``scheme "://" host [":" port]`` and nothing after (RFC 6454 §6.2), with an
    ``http`` or ``https`` scheme and the host and port of :func:`parse_authority`; anything else
    (``null``, a path, a user part, a list of origins) is None.
    """
    scheme, sep, authority = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _SCHEMES:
        return None
    parsed = parse_authority(authority)
    return None if parsed is None else (scheme, *parsed)


def _any_port_host(pattern: str) -> str | None:
    """The host of a pattern that allows any port (``name``, ``name:*``), else None."""
    return _host_of(_ANY_PORT.fullmatch(pattern.lower()))


@final
@dataclass(frozen=True, slots=True)
class _HostRules:
    """An allow-list: host names allowed on any port, and exact ``(host, port)`` pairs."""

    any_port: frozenset[str]
    exact: frozenset[tuple[str, int]]

    @classmethod
    def parse(cls, patterns: Sequence[str]) -> _HostRules:
        any_port: set[str] = set()
        exact: set[tuple[str, int]] = set()
        for raw in patterns:
            pattern = raw.strip()
            host = _any_port_host(pattern)
            parsed = None if host is not None else parse_authority(pattern)
            if host is not None:
                any_port.add(host)
            elif parsed is not None and parsed[1] is not None:
                exact.add((parsed[0], parsed[1]))
            else:
                raise ValueError(f"not a host pattern (name, name:*, or name:port): {pattern!r}")
        return cls(frozenset(any_port), frozenset(exact))

    def allows(self, authority: str) -> bool:
        parsed = parse_authority(authority)
        if parsed is None:  # malformed: never allowed, whatever it starts with
            return False
        host, port = parsed
        return host in self.any_port or (port is not None and (host, port) in self.exact)


@final
@dataclass(frozen=True, slots=True)
class _OriginRules:
    """Origins allowed: ``scheme://host`` on any port, and exact ``scheme://host[:port]``."""

    any_port: frozenset[tuple[str, str]]
    exact: frozenset[tuple[str, str, int | None]]

    @classmethod
    def parse(cls, patterns: Sequence[str]) -> _OriginRules:
        any_port: set[tuple[str, str]] = set()
        exact: set[tuple[str, str, int | None]] = set()
        for raw in patterns:
            pattern = raw.strip()
            scheme, sep, rest = pattern.partition("://")
            scheme = scheme.lower()
            host = _any_port_host(rest) if rest.endswith(":*") else None
            parsed = parse_origin(pattern)
            if sep and scheme in _SCHEMES and host is not None:
                any_port.add((scheme, host))
            elif parsed is not None:
                exact.add(parsed)
            else:
                raise ValueError(
                    f"not an origin pattern (http[s]://host[:port] or http[s]://host:*): "
                    f"{pattern!r}"
                )
        return cls(frozenset(any_port), frozenset(exact))

    def allows(self, origin: str) -> bool:
        parsed = parse_origin(origin)
        if parsed is None:  # "null", garbage, anything after host[:port]: never allowed
            return False
        return parsed in self.exact or parsed[:2] in self.any_port


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How a :class:`SkillsApp` serves HTTP. Every default is the safe one.

    Attributes:
        path: The endpoint's path (under the ``root_path`` of a mount).
        allowed_hosts: ``Host`` values accepted: ``"name"`` or ``"name:*"`` for any port,
            ``"name:port"`` for one; ``None`` accepts any host (only behind a proxy that checks).
        allowed_origins: ``Origin`` values accepted when a request carries one:
            ``"scheme://host:*"`` for any port, ``"scheme://host[:port]"`` exactly. A request
            without ``Origin`` (any non-browser client) is not affected.
        cors: Answer CORS preflights and add CORS headers for allowed origins (for browser
            clients on other origins).
        max_body_bytes: Largest request body, checked before and while reading.
        body_timeout: Seconds to receive a whole body.
        session_ttl: Seconds a legacy session id stays valid.
        send_timeout: Seconds a response may wait for the client to take more of it; then it is
            ended (and the connection closed), and its turn freed.
        head_timeout: Seconds a client has to send a request head, from the connection's start or,
            on a kept-alive connection, from the head's first byte (enforced by the ASGI server:
            see :mod:`skills_core.adapters.uvicorn_http`).
        idle_timeout: Seconds a kept-alive connection may stay idle after an answer (as above).
        max_large_answers: Answers over :data:`LARGE_ANSWER_BYTES` made and sent at once.
        large_answer_queue: Requests that may wait for a large answer's turn; past them, 503.
        principal: ``scope -> name`` of the authenticated caller (set by your auth middleware),
            binding legacy sessions to whoever opened them; ``None`` when there is no auth.
        metrics: Answer ``GET /metrics`` with counters in the Prometheus text format (see
            :mod:`skills_core.http.probes` for who may ask); ``/healthz`` and ``/readyz`` are
            always answered.
        graceful_timeout: Seconds the requests in flight have to finish once the server is told
            to stop; then the ones left are ended (enforced by the ASGI server: see
            :mod:`skills_core.adapters.uvicorn_http`).
    """

    path: str = DEFAULT_PATH
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    allowed_origins: tuple[str, ...] = LOOPBACK_ORIGINS
    cors: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    session_ttl: int = DEFAULT_SESSION_TTL
    send_timeout: float = DEFAULT_SEND_TIMEOUT
    head_timeout: float = DEFAULT_HEAD_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_large_answers: int = DEFAULT_MAX_LARGE_ANSWERS
    large_answer_queue: int = DEFAULT_LARGE_ANSWER_QUEUE
    principal: Callable[[Scope], str | None] | None = None
    metrics: bool = False
    graceful_timeout: float = DEFAULT_GRACEFUL_TIMEOUT
    _hosts: _HostRules | None = field(init=False, repr=False, compare=False)
    _origins: _OriginRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the settings and compile the allow-lists.

        Raises:
            ValueError: a setting is out of range, or a host or origin pattern is malformed.
        """
        if not self.path.startswith("/") or any(c in self.path for c in "?#"):
            raise ValueError(f"path must start with '/' and hold no query: {self.path!r}")
        if self.max_body_bytes < 1 or self.body_timeout <= 0 or self.session_ttl < 1:
            raise ValueError("max_body_bytes, body_timeout and session_ttl must be positive")
        if not all(
            0 < t < _FOREVER for t in (self.send_timeout, self.head_timeout, self.idle_timeout)
        ):
            raise ValueError(
                "send_timeout, head_timeout and idle_timeout must be positive and finite"
            )
        if not 0 <= self.graceful_timeout < _FOREVER:
            raise ValueError("graceful_timeout must be 0 or more, and finite")
        if self.max_large_answers < 1 or self.large_answer_queue < 0:
            raise ValueError("max_large_answers must be at least 1, large_answer_queue at least 0")
        hosts = None if self.allowed_hosts is None else _HostRules.parse(self.allowed_hosts)
        object.__setattr__(self, "_hosts", hosts)
        object.__setattr__(self, "_origins", _OriginRules.parse(self.allowed_origins))

    def allows_host(self, authority: str) -> bool:
        """Whether a request's ``Host`` value is on the allow-list (always, without one)."""
        return self._hosts is None or self._hosts.allows(authority)

    def allows_origin(self, origin: str) -> bool:
        """Whether a request's ``Origin`` value is on the allow-list."""
        return self._origins.allows(origin)
