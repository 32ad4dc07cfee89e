"""What an HTTP skills server's log says: one line per request and per event, as text or JSON.

Theory of operation
-------------------
The adapter (:mod:`skills_core.adapters._asgi_observe`) times each request, picks its level with
:func:`request_level` and writes the line :func:`request_line` makes; other happenings (the
server stopping, what was in flight) are :func:`event_line`. Everything here is pure: the adapter
passes the time already written (:class:`TimeText` of the clock it reads) and writes the result.

**A request's line** carries, in this order: the time (UTC, milliseconds), the level, ``request``,
the client (``host:port``, the forwarded one behind a trusted proxy), the HTTP status, the HTTP
method and path, the JSON-RPC method, the URI a ``resources/read``, ``skills/get`` or
``resources/directory/read`` names, the JSON-RPC error code, the bytes of the response body, the
milliseconds from the request's arrival to its last byte handed to the server, and why it was
refused when it was. Text is ``key=value`` pairs (``-`` for a value that is absent)::

    2026-07-28T09:30:00.123Z INFO request client=127.0.0.1:53122 status=200 verb=POST path=/mcp
    method=resources/read uri=skill://pdf/SKILL.md code=- bytes=1466 ms=0.84

(one line), and JSON lines are one object per line with the same keys (``null`` when absent;
``level`` in lowercase, ``status``, ``code`` and ``bytes`` numbers).

**Nothing a client sent can forge or hide a line.** Every value a client controls (the path,
the method, the URI, a header quoted in a reason, a forwarded address) goes through
:func:`~skills_core.display.display_line` in text, and is cut after :data:`VALUE_LIMIT`
characters; a value holding a space, a quote or ``=`` is written as a JSON string, so it cannot
pass for more pairs. A JSON line is written by :func:`~skills_core.display.display_json`. So a
line is one line, carries no terminal escape, and no CI runner reads a command in it. No line
ever holds a header's value other than the refused ``Host``, ``Origin``, ``Content-Type`` or
``Accept`` named in a reason: never ``Authorization``, a cookie, a cursor or a session id.

**Levels.** Probes are ``debug`` (they come every few seconds); requests ``info``; refusals
that mean a client or a proxy is misconfigured or misbehaving (421, 403, 413, 408, 415, every 5xx,
a request cut off when the server stopped) and a cursor or session signed with another key (the
servers behind one address do not share their secret) are ``warning``; a JSON-RPC ``-32603
Internal error`` (a fault of the server) is ``error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, final

from ..display import display_json, display_json_text, display_line
from ..spec import ErrorCode, Method

__all__ = [
    "DEBUG",
    "INFO",
    "WARNING",
    "ERROR",
    "LEVELS",
    "LOG_FORMATS",
    "VALUE_LIMIT",
    "WARNING_STATUSES",
    "level_name",
    "iso_time",
    "TimeText",
    "client_text",
    "uri_of",
    "request_level",
    "RequestLines",
    "request_line",
    "event_line",
]

#: The levels, numbered as the standard library's ``logging`` numbers them.
DEBUG: Final = 10
INFO: Final = 20
WARNING: Final = 30
ERROR: Final = 40
#: The names a ``--log-level`` takes.
LEVELS: Final = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR}
_NAMES: Final = {DEBUG: "DEBUG", INFO: "INFO", WARNING: "WARNING", ERROR: "ERROR"}
#: The formats a ``--log-format`` takes.
LOG_FORMATS: Final = ("text", "json")
#: Characters of a value a client controls shown in a line; the rest is cut (its length said).
VALUE_LIMIT: Final = 300
#: Statuses logged at warning level: refusals that mean a misconfigured or misbehaving client
#: or proxy (Origin, body size or time, media type, Host), and the server's own failures.
WARNING_STATUSES: Final = frozenset({403, 408, 413, 415, 421, 500, 502, 503, 504})

#: Methods whose params name a URI worth logging.
_NAMES_A_URI: Final = frozenset(
    {Method.RESOURCES_READ, Method.SKILLS_GET, Method.RESOURCES_DIRECTORY_READ}
)
#: Characters that make a text value quoted (so it cannot pass for more pairs).
_QUOTE_IF: Final = frozenset(' "=')


def level_name(level: int) -> str:
    """``"INFO"`` for :data:`INFO`, and so on (a number otherwise)."""
    return _NAMES.get(level) or str(level)


def iso_time(seconds: float) -> str:
    """``2026-07-28T09:30:00.123Z`` for ``seconds`` since the epoch (UTC, milliseconds).

    Example:
        >>> iso_time(951782400.5)
        '2000-02-29T00:00:00.500Z'
    """
    second, millis = divmod(int(seconds * 1000), 1000)
    return f"{_civil(second)}.{millis:03d}Z"


@final
class TimeText:
    """:func:`iso_time` that works out each whole second's text once (a log writes many lines a
    second)."""

    __slots__ = ("_second", "_whole")

    def __init__(self) -> None:
        self._second = -1
        self._whole = ""

    def __call__(self, seconds: float) -> str:
        """:func:`iso_time` of ``seconds``."""
        second, millis = divmod(int(seconds * 1000), 1000)
        if second != self._second:
            self._second, self._whole = second, _civil(second)
        return f"{self._whole}.{millis:03d}Z"


def _civil(second: int) -> str:
    """The UTC date and time of a whole second since the epoch, without a clock or a library
    (the days-to-civil algorithm of the proleptic Gregorian calendar)."""
    days, rest = divmod(second, 86400)
    hour, rest = divmod(rest, 3600)
    minute, sec = divmod(rest, 60)
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    year = year_of_era + era * 400
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    if month <= 2:
        year += 1
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{sec:02d}"


def client_text(client: object) -> str | None:
    """``host:port`` of an ASGI scope's ``client`` (``[v6]:port``; the host alone when the port
    is 0 or absent, as a forwarded address is), or None when it is unknown."""
    if not isinstance(client, (tuple, list)) or not client:
        return None
    host = str(client[0])
    port = client[1] if len(client) > 1 else None
    if ":" in host:
        host = f"[{host}]"
    if isinstance(port, int) and port:
        return f"{host}:{port}"
    return host


def uri_of(method: str | None, params: object) -> str | None:
    """The URI a request names, for the methods that name one (None otherwise)."""
    if method not in _NAMES_A_URI or not isinstance(params, dict):
        return None
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None


def request_level(
    status: int | None, code: int | None, *, probe: bool = False, alarm: bool = False
) -> int:
    """The level of a request's line (see the module docstring).

    Args:
        status: The HTTP status sent, or None when none was (the client left first).
        code: The JSON-RPC error code answered, or None.
        probe: A probe (``/healthz``, ``/readyz``, ``/metrics``) answered.
        alarm: Something the operator must see whatever the status: a cursor or session signed
            with another key, a request cut off when the server stopped.
    """
    if code == ErrorCode.INTERNAL_ERROR:
        return ERROR
    if alarm or status in WARNING_STATUSES:
        return WARNING
    return DEBUG if probe else INFO


def _text(value: str | None) -> str:
    """A value a client may control, as text: escaped, cut, quoted when it holds a separator."""
    if value is None:
        return "-"
    shown = display_line(value, VALUE_LIMIT)
    if not shown or shown == "-" or not _QUOTE_IF.isdisjoint(shown):
        return json.dumps(shown, ensure_ascii=False)
    return shown


def _cut(value: str | None) -> str | None:
    """A value a client may control, for JSON (escaped by ``display_json``): cut only."""
    if value is None or len(value) <= VALUE_LIMIT:
        return value
    return f"{value[:VALUE_LIMIT]}... ({len(value):,} characters in all)"


def _json(value: str | None) -> str:
    """A value a client may control, as a JSON value made safe by ``display_json``'s rules."""
    return display_json(_cut(value), indent=None)


#: Values whose shown form a :class:`RequestLines` remembers before it starts over.
_REMEMBERED: Final = 512


@final
class RequestLines:
    """Makes request lines in one format (see the module docstring).

    A client sends the same path, method and URIs again and again: how each value is shown is
    worked out once and remembered (up to :data:`_REMEMBERED` values, then the table starts over),
    so a line costs little more than joining its parts.
    """

    __slots__ = ("_shown", "log_format")

    def __init__(self, log_format: str) -> None:
        """Make lines in ``log_format``: ``"text"`` or ``"json"``.

        Raises:
            ValueError: another format.
        """
        if log_format not in LOG_FORMATS:
            raise ValueError(f"the log format must be text or json, not {log_format!r}")
        self.log_format = log_format
        self._shown: dict[str, str] = {}

    def _show(self, value: str | None) -> str:
        if value is None:
            return "-" if self.log_format == "text" else "null"
        shown = self._shown.get(value)
        if shown is None:
            shown = _text(value) if self.log_format == "text" else _json(value)
            if len(self._shown) >= _REMEMBERED:
                self._shown.clear()
            self._shown[value] = shown
        return shown

    def line(
        self,
        when: str,
        level: int,
        *,
        client: str | None,
        status: int | None,
        verb: str,
        path: str,
        method: str | None,
        uri: str | None,
        code: int | None,
        size: int,
        seconds: float,
        note: str | None = None,
    ) -> str:
        """One request's line (without the line break); see the module docstring.

        Args:
            when: :func:`iso_time` of the request's end.
            level: Its level (:func:`request_level`).
            client: :func:`client_text` of the scope's client.
            status: The HTTP status, or None when nothing was sent.
            verb: The HTTP method.
            path: The request's path.
            method: The JSON-RPC method, when the body named one.
            uri: The URI the request named (:func:`uri_of`).
            code: The JSON-RPC error code answered, or None.
            size: Bytes of the response body sent.
            seconds: Time from the request's arrival to its end.
            note: Why it was refused or cut, or None.
        """
        show = self._show
        millis = round(seconds * 1000, 3)
        if self.log_format == "json":
            reason = "" if note is None else f',"reason":{_json(note)}'
            return (
                f'{{"time":"{when}","level":"{level_name(level).lower()}","event":"request",'
                f'"client":{show(client)},"status":{"null" if status is None else status},'
                f'"verb":{show(verb)},"path":{show(path)},"method":{show(method)},'
                f'"uri":{show(uri)},"code":{"null" if code is None else code},'
                f'"bytes":{size},"ms":{millis!r}{reason}}}'
            )
        line = (
            f"{when} {level_name(level)} request client={show(client)} "
            f"status={'-' if status is None else status} verb={show(verb)} path={show(path)} "
            f"method={show(method)} uri={show(uri)} code={'-' if code is None else code} "
            f"bytes={size} ms={millis:.3f}"
        )
        if note is not None:
            line += f" reason={_text(note)}"
        return line


def request_line(log_format: str, when: str, level: int, **fields: Any) -> str:
    """:meth:`RequestLines.line` of a :class:`RequestLines` in ``log_format`` (one line, once)."""
    return RequestLines(log_format).line(when, level, **fields)


def event_line(
    log_format: str,
    when: str,
    level: int,
    event: str,
    message: str,
    *,
    fields: Mapping[str, str | int | float | None] | None = None,
) -> str:
    """A line about something other than a request (the server stopping, say).

    Text: ``TIME LEVEL EVENT key=value... message``; JSON: ``time``, ``level``, ``event``, the
    fields, ``message``. Every value and the message may hold untrusted text.

    Args:
        log_format: ``"text"`` or ``"json"``.
        when: :func:`iso_time` of the event.
        level: Its level.
        event: A word naming what happened (``shutdown``, ``drain``); ours, not a client's.
        message: What happened, in words.
        fields: Values a program reading the log may want, by name (names are ours).
    """
    fields = fields or {}
    if log_format == "json":
        document: dict[str, object] = {
            "time": when,
            "level": level_name(level).lower(),
            "event": event,
        }
        for name, value in fields.items():
            document[name] = _cut(value) if isinstance(value, str) else value
        document["message"] = message
        return display_json_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
    pairs = "".join(
        f" {name}={_text(value) if isinstance(value, str) or value is None else value}"
        for name, value in fields.items()
    )
    return (
        f"{when} {level_name(level)} {display_line(event, 40)}{pairs} {display_line(message, 4000)}"
    )
