"""What an operator sees of a running SkillsApp: a line per request, metrics, the probes, the drain.

Theory of operation
-------------------
Each :class:`~skills_core.adapters._asgi_app.SkillsApp` has an :class:`Observer`. The app hands
it each request when it arrives (:meth:`Observer.arrived`, which notes the time and keeps the
request among those in flight) and when it is over (:meth:`Observer.over`): the observer then
counts it (when metrics are on) and writes its line (when the level allows). What the line says
and its level are the pure :mod:`skills_core.http.logs`' business, what the counters are and
their text :mod:`skills_core.http.metrics`'; the clocks, the logging and the files are here.

**Logging** goes through the standard library's ``logging``, logger ``skills_core.http``, which
says nothing until configured (a library's manners). :func:`configure_logging` (called by
:func:`~skills_core.adapters.asgi.app_from_env` when ``SKILLS_CORE_LOG_LEVEL`` is set, as
``skills-core serve --http`` sets it) gives that logger, and uvicorn's own loggers through
:func:`uvicorn_log_config`, one handler writing to stderr in the chosen format, text or JSON
lines, so every line on stderr has the same form and goes through
:mod:`skills_core.display` (uvicorn's messages and tracebacks included, as one line each).

A line per request must cost little beside the request, and a :class:`logging.LogRecord` and a
write to stderr per request are a sizeable part of a small request's work (what the line costs as
made here is measured by ``tests/benchmarks/bench_http.py``). So when the handler is ours
(configured here) the observer hands it each line ready-made, and the handler writes the lines of
one turn of the event loop with one write; records from anywhere else (uvicorn, an embedding
application) are formatted and join the same queue, so lines keep their order. When an
application configures the logger itself, each line is an ordinary record whose message is the
line.

**Metrics** (``HttpOptions.metrics``): each worker counts its requests; with several workers
sharing a port, each writes a report of itself every second to a private directory the workers
share (``state_dir``: ``serve --http`` makes one), and the worker that answers a scrape adds the
others' reports to its own (see :mod:`skills_core.http.metrics`). Whether the catalog changed
(a re-scan, counted and timed) and whether the source's looks fail is noted when metrics are
made, a scrape or a report, never per request.

**The drain.** When uvicorn is told to stop, :mod:`~skills_core.adapters.uvicorn_http`'s protocol
tells the observer (:meth:`Observer.draining`), which logs what is in flight; at the graceful
timeout the protocol ends what is left (a 503 for a request not yet answered, a reset for an
answer being sent) and names each to the observer (:meth:`Observer.cut`), which logs them. When
the app's lifespan ends the observer logs the outcome and, given a ``state_dir``, writes it there
for ``serve --http`` (which exits with a status saying whether the drain completed).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Final, TextIO, final

from ..http.logs import (
    DEBUG,
    INFO,
    LEVELS,
    LOG_FORMATS,
    WARNING,
    RequestLines,
    TimeText,
    client_text,
    event_line,
    iso_time,
    request_level,
    uri_of,
)
from ..http.metrics import (
    RequestCounters,
    ServerState,
    WorkerReport,
    merge_reports,
    method_label,
    render_metrics,
)
from ..http.options import HttpOptions, Scope
from ..http.server import Call, Reply
from ..http.session import SESSION_FOREIGN
from ..server.cursors import CURSOR_FOREIGN
from ..server.handler import SkillsServer

__all__ = [
    "LOGGER_NAME",
    "configure_logging",
    "log_event",
    "log_handler",
    "logging_configured",
    "uvicorn_log_config",
    "Exchange",
    "Observer",
    "read_drain_reports",
]

#: The logger of request lines and of the app's events.
LOGGER_NAME: Final = "skills_core.http"
_LOGGER: Final = logging.getLogger(LOGGER_NAME)
_LOGGER.addHandler(logging.NullHandler())  # silent until configured: a library's manners

#: Notes that are an alarm whatever the status: the servers behind one address disagree on keys.
_ALARMS: Final = frozenset({CURSOR_FOREIGN, SESSION_FOREIGN})
#: Seconds between two reports a worker writes for the others (metrics).
_REPORT_EVERY: Final = 1.0
#: File names in a state directory.
_METRICS_PREFIX: Final = "metrics-"
_DRAIN_PREFIX: Final = "drain-"
_STARTED_PREFIX: Final = "started-"


# --- logging ----------------------------------------------------------------------------------


@final
class _Queue:
    """The lines waiting to be written to stderr: those of one event-loop turn go in one write.

    One per process, whatever handlers write to it, so lines keep their order. Outside an event
    loop, or from another thread, a line is written at once.
    """

    __slots__ = ("_guard", "_pending", "_scheduled", "log_format", "stream")

    def __init__(self) -> None:
        #: Where lines go; None for whatever ``sys.stderr`` is when they are written.
        self.stream: TextIO | None = None
        self.log_format = "text"
        self._pending: list[str] = []
        self._scheduled = False
        self._guard = threading.Lock()

    def line(self, text: str) -> None:
        """Queue ``text`` (a line without its break)."""
        with self._guard:
            self._pending.append(text)
            if self._scheduled:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop in this thread: now
                loop = None
            if loop is not None:
                self._scheduled = True
                loop.call_soon(self.flush)
                return
        self.flush()

    def flush(self) -> None:
        """Write what is queued."""
        with self._guard:
            pending, self._pending = self._pending, []
            self._scheduled = False
        if pending:
            stream = self.stream if self.stream is not None else sys.stderr
            with contextlib.suppress(OSError, ValueError):  # stderr closed: nobody to tell
                stream.write("\n".join(pending) + "\n")
                stream.flush()


_QUEUE: Final = _Queue()
atexit.register(_QUEUE.flush)


@final
class _Lines(logging.Handler):
    """A handler writing each record as one of our lines to stderr (through :data:`_QUEUE`)."""

    def __init__(self) -> None:
        super().__init__()
        self._time = TimeText()

    def emit(self, record: logging.LogRecord) -> None:
        """Queue ``record`` as one of our lines."""
        try:
            _QUEUE.line(self.format(record))
        except Exception:  # noqa: BLE001 - logging's own convention: report, never raise
            self.handleError(record)

    def flush(self) -> None:
        """Write what is queued."""
        _QUEUE.flush()

    def format(self, record: logging.LogRecord) -> str:
        """The line: the record's time, level, logger (``uvicorn`` for uvicorn's), message, and
        its exception as ``Type: message`` (the traceback too, escaped, at debug level)."""
        if getattr(record, "skills_core_line", False):
            return str(record.msg)
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message += f" ({type(error).__name__}: {error})"
            if _LOGGER.isEnabledFor(DEBUG):
                message += " " + logging.Formatter().formatException(record.exc_info)
        event = "uvicorn" if record.name.startswith("uvicorn") else record.name
        return event_line(
            _QUEUE.log_format, self._time(record.created), record.levelno, event, message
        )


def _checked(level: str, log_format: str) -> int:
    if level not in LEVELS:
        raise ValueError(f"the log level must be one of {', '.join(LEVELS)}, not {level!r}")
    if log_format not in LOG_FORMATS:
        raise ValueError(f"the log format must be text or json, not {log_format!r}")
    return LEVELS[level]


def configure_logging(level: str, log_format: str = "text") -> None:
    """Write the ``skills_core.http`` lines from ``level`` on to stderr, in ``log_format``.

    Process-wide (it configures a logger); calling it again replaces the settings.

    Args:
        level: ``debug``, ``info``, ``warning`` or ``error``.
        log_format: ``text`` or ``json``.

    Raises:
        ValueError: an unknown level or format.
    """
    number = _checked(level, log_format)
    _QUEUE.log_format = log_format
    for old in list(_LOGGER.handlers):
        _LOGGER.removeHandler(old)
    _LOGGER.addHandler(_Lines())
    _LOGGER.setLevel(number)
    _LOGGER.propagate = False


def logging_configured() -> bool:
    """Whether :func:`configure_logging` gave the ``skills_core.http`` logger our handler."""
    return any(type(handler) is _Lines for handler in _LOGGER.handlers)


def log_handler() -> logging.Handler:
    """A handler writing our lines to stderr, for ``logging.config`` (see
    :func:`uvicorn_log_config`); the format is ``SKILLS_CORE_LOG_FORMAT`` (text unless ``json``)."""
    log_format = os.environ.get("SKILLS_CORE_LOG_FORMAT", "").strip()
    _QUEUE.log_format = log_format if log_format in LOG_FORMATS else "text"
    return _Lines()


def uvicorn_log_config(level: str, log_format: str) -> dict[str, Any]:
    """A ``log_config`` for ``uvicorn.run``: uvicorn's loggers write through our handler.

    uvicorn applies it in each worker, which has ``SKILLS_CORE_LOG_FORMAT`` in its environment.
    uvicorn's own lines are warnings and errors only (its access log stays off: ours replaces it).

    Raises:
        ValueError: an unknown level or format.
    """
    number = _checked(level, log_format)
    uvicorn_level = logging.getLevelName(max(number, WARNING))
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"skills_core": {"()": f"{__name__}.log_handler"}},
        "loggers": {
            "uvicorn": {"handlers": ["skills_core"], "level": uvicorn_level, "propagate": False},
            "uvicorn.error": {"level": uvicorn_level},
            "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        },
    }


# --- one request --------------------------------------------------------------------------------


@final
class Exchange:
    """One request, as the observer follows it: when it came, what it was, what it got."""

    __slots__ = (
        "call",
        "cut",
        "probe",
        "reply",
        "scope",
        "sent",
        "size",
        "started",
        "status",
    )

    def __init__(self, scope: Scope, started: float) -> None:
        self.scope = scope
        self.started = started
        #: The call the checks made of it, once they did.
        self.call: Call | None = None
        #: The reply sent (or being sent), once there is one.
        self.reply: Reply | None = None
        #: The status and body bytes sent, when they differ from the reply's (a 503 at its turn).
        self.status: int | None = None
        self.size = 0
        #: Whether the reply's head was handed to the ASGI server.
        self.sent = False
        #: A probe's name, for a probe.
        self.probe: str | None = None
        #: Why it was ended when the server stopped, or None.
        self.cut: str | None = None


# --- the observer -------------------------------------------------------------------------------


@final
class Observer:
    """One app's requests in flight, counters, log lines, and its part in a drain."""

    __slots__ = (
        "_catalog",
        "_counted",
        "_counters",
        "_cut",
        "_draining",
        "_finished_in_drain",
        "_in_flight",
        "_last_scan",
        "_lines",
        "_loop",
        "_scan_failing",
        "_scan_failures",
        "_scans",
        "_served",
        "_server",
        "_state_dir",
        "_time",
        "graceful_timeout",
    )

    def __init__(self, server: SkillsServer, options: HttpOptions, state_dir: str | None) -> None:
        self._server = server
        self._state_dir = state_dir
        self.graceful_timeout = options.graceful_timeout
        self._counters = RequestCounters() if options.metrics else None
        self._in_flight: dict[int, Exchange] = {}
        self._time = TimeText()
        #: Catalogs seen served (the first, and each one a re-scan made), and when the last
        #: was first seen; looks for added or removed skills that failed (``poll_note``).
        self._served: object = server.catalog
        self._scans = 1
        self._last_scan = time.time()
        self._scan_failures = 0
        self._scan_failing = False
        self._catalog: object = None
        self._counted = (0, 0)
        self._draining: float | None = None
        self._cut = 0
        self._finished_in_drain = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lines = RequestLines("text")

    # -- requests ---------------------------------------------------------------------------------

    def arrived(self, scope: Scope) -> Exchange:
        """A request came: note when, and keep it among those in flight."""
        exchange = Exchange(scope, time.perf_counter())
        self._in_flight[id(scope)] = exchange
        return exchange

    def over(self, exchange: Exchange) -> None:
        """A request is over (answered, refused, cut, or its client left): count it, log it."""
        seconds = time.perf_counter() - exchange.started
        del self._in_flight[id(exchange.scope)]
        if self._draining is not None and exchange.cut is None:
            self._finished_in_drain += 1
        reply, call = exchange.reply, exchange.call
        status = exchange.status
        if status is None and reply is not None and exchange.sent:
            status = reply.status
        if call is not None:
            method: str | None = call.method
        else:
            method = None if reply is None else reply.method
        counters = self._counters
        if counters is not None and exchange.probe is None:
            counters.observe(method_label(method), status or 0, seconds, exchange.size)
        cut = exchange.cut
        if reply is None:
            note, code = cut, None
        else:
            note, code = cut or reply.note, reply.code
        if note is None and status is None:
            note = "the client left first"
        if code is None and status is not None and status < 300 and note is None:
            level = INFO if exchange.probe is None else DEBUG  # the usual case, decided quickly
        else:
            level = request_level(
                status,
                code,
                probe=exchange.probe is not None,
                alarm=cut is not None or note in _ALARMS,
            )
        if not _LOGGER.isEnabledFor(level):
            return
        lines = self._lines
        if lines.log_format != _QUEUE.log_format:
            lines = self._lines = RequestLines(_QUEUE.log_format)
        scope = exchange.scope
        _write(
            level,
            lines.line(
                self._time(time.time()),
                level,
                client=client_text(scope.get("client")),
                status=status,
                verb=scope.get("method", ""),
                path=scope.get("path", ""),
                method=method,
                uri=None if call is None else uri_of(method, call.params),
                code=code,
                size=exchange.size,
                seconds=seconds,
                note=note,
            ),
        )

    def serve(self, server: SkillsServer) -> None:
        """Follow ``server`` from now on (it replaces the one an app served while loading)."""
        self._server = server
        self._served = server.catalog
        self._last_scan = time.time()

    def _rescanned(self) -> None:
        """Note a new catalog (counted and timed) and whether the source's looks for added or
        removed skills fail (``FilesystemSource.poll_note``: the catalog is kept meanwhile).

        Looked at when metrics are made (a scrape, a report every second), never per request:
        a catalog changed by a read is rebuilt only when asked for.
        """
        server = self._server
        failing = getattr(server.source, "poll_note", None) is not None
        if server.catalog is not self._served:
            self._served = server.catalog
            self._scans += 1
            self._last_scan = time.time()
        if failing and not self._scan_failing:
            self._scan_failures += 1
        self._scan_failing = failing

    @property
    def in_flight(self) -> int:
        """Requests being answered now."""
        return len(self._in_flight)

    # -- probes ---------------------------------------------------------------------------------

    def metrics(self) -> bytes:
        """The metrics text (every worker's counts, given a state directory)."""
        self._rescanned()
        counters = self._counters if self._counters is not None else RequestCounters()
        own = WorkerReport(
            worker=os.getpid(),
            counters=counters,
            in_flight=self.in_flight,
            scans=self._scans,
            last_scan=self._last_scan,
            scan_failures=self._scan_failures,
        )
        skills, files = self._catalog_counts()
        state = ServerState(
            in_flight=self.in_flight - 1,  # not the scrape itself
            ready=self._server.has_catalog,
            skills=skills,
            files=files,
            scans=own.scans,
            last_scan=own.last_scan,
            scan_failures=own.scan_failures,
        )
        merged, state = merge_reports(own, state, self._others())
        return render_metrics(merged, state)

    def _catalog_counts(self) -> tuple[int, int]:
        """(skills, files) of the catalog served, counted once per catalog."""
        catalog = self._server.catalog
        if catalog is not self._catalog:
            files = 0
            for skill in catalog.skills:
                encoded = skill.encoded_entry
                if encoded is not None:  # restored from an index: count without building it
                    resources = json.loads(encoded).get("resources")
                    files += len(resources) if isinstance(resources, list) else 0
                else:
                    files += len(skill.files)
            self._catalog, self._counted = catalog, (len(catalog.skills), files)
        return self._counted

    def _others(self) -> Iterator[tuple[WorkerReport, bool]]:
        """The other workers' last reports, each with whether that worker still runs."""
        folder = self._state_dir
        if folder is None:
            return
        mine = f"{_METRICS_PREFIX}{os.getpid()}.json"
        try:
            names = [n for n in os.listdir(folder) if n.startswith(_METRICS_PREFIX) and n != mine]
        except OSError:
            return
        for name in names:
            report = WorkerReport.from_json(_read_json(os.path.join(folder, name)))
            if report is not None:
                yield report, _running(report.worker)

    # -- lifespan and the drain -------------------------------------------------------------------

    def started(self) -> None:
        """The ASGI server started the app (lifespan): note this worker, start its reports."""
        folder = self._state_dir
        if folder is None:
            return
        _write_file(os.path.join(folder, f"{_STARTED_PREFIX}{os.getpid()}"), b"")
        if self._counters is not None:
            self._report()  # at once: a scrape counts this worker from its start
            with contextlib.suppress(RuntimeError):  # under trio: no reports (one worker)
                self._loop = asyncio.get_running_loop()
                self._loop.call_later(_REPORT_EVERY, self._report_now_and_then)

    def _report_now_and_then(self) -> None:
        self._report()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_later(_REPORT_EVERY, self._report_now_and_then)

    def _report(self) -> None:
        folder, counters = self._state_dir, self._counters
        if folder is None or counters is None:
            return
        self._rescanned()
        report = WorkerReport(
            worker=os.getpid(),
            counters=counters,
            in_flight=self.in_flight,
            scans=self._scans,
            last_scan=self._last_scan,
            scan_failures=self._scan_failures,
        )
        path = os.path.join(folder, f"{_METRICS_PREFIX}{os.getpid()}.json")
        _write_file(path, json.dumps(report.to_json()).encode())

    def draining(self, timeout: float | None = None) -> None:
        """The ASGI server stops: log what is in flight (once).

        Args:
            timeout: Seconds the requests in flight are given, when not the app's
                ``graceful_timeout`` (the ASGI server's own deadline is shorter).
        """
        if self._draining is not None:
            return
        if timeout is not None:
            self.graceful_timeout = timeout
        self._draining = now = time.perf_counter()
        shown = []
        for exchange in list(self._in_flight.values())[:20]:
            call = exchange.call
            what = "a request not read yet" if call is None else call.method
            uri = None if call is None else uri_of(call.method, call.params)
            who = client_text(exchange.scope.get("client")) or "an unknown client"
            shown.append(
                f"{what}{'' if uri is None else ' ' + uri} from {who} "
                f"({now - exchange.started:.1f} s)"
            )
        count = len(self._in_flight)
        listed = f": {'; '.join(shown)}" if shown else ""
        more = f" and {count - len(shown)} more" if count > len(shown) else ""
        self.event(
            INFO,
            "drain",
            f"stopping: {count} request(s) in flight, given {self.graceful_timeout:g} s to "
            f"finish{listed}{more}",
            in_flight=count,
            timeout=self.graceful_timeout,
        )

    def cut(self, scope: Scope, answered: bool) -> None:
        """The protocol ended the request of ``scope`` at the graceful timeout: with a 503 when
        ``answered`` is false (nothing was sent yet), else by resetting its connection."""
        exchange = self._in_flight.get(id(scope))
        self._cut += 1
        if exchange is None:
            return
        timeout = self.graceful_timeout
        if answered:
            exchange.cut = f"cut off: the server stopped and {timeout:g} s passed mid-answer"
        else:
            exchange.cut = f"answered 503: the server stopped and {timeout:g} s passed"
            exchange.status, exchange.size, exchange.sent = 503, 0, True

    @property
    def stopping(self) -> bool:
        """Whether the ASGI server is stopping (a drain began)."""
        return self._draining is not None

    def stopped(self) -> None:
        """The app's lifespan ends: log the drain's outcome; write it (and a last report)."""
        cut, finished = self._cut, self._finished_in_drain
        if self._draining is None:
            self.event(INFO, "stopped", "stopped: nothing was in flight", cut=0, finished=0)
        elif cut:
            self.event(
                WARNING,
                "stopped",
                f"stopped: {cut} request(s) ended at the graceful timeout of "
                f"{self.graceful_timeout:g} s ({finished} finished in time)",
                cut=cut,
                finished=finished,
            )
        else:
            self.event(
                INFO,
                "stopped",
                f"stopped: every request in flight finished ({finished})",
                cut=0,
                finished=finished,
            )
        self._loop = None
        folder = self._state_dir
        if folder is not None:
            self._report()
            outcome = json.dumps({"cut": cut, "finished": finished}).encode()
            _write_file(os.path.join(folder, f"{_DRAIN_PREFIX}{os.getpid()}.json"), outcome)
        _QUEUE.flush()

    def event(self, level: int, event: str, message: str, **fields: str | int | float) -> None:
        """Log an event line (not a request's)."""
        if _LOGGER.isEnabledFor(level):
            _write(
                level,
                event_line(
                    _log_format(), self._time(time.time()), level, event, message, fields=fields
                ),
            )


def log_event(level: str, event: str, message: str) -> None:
    """Log a line about ``event`` (not a request) at ``level`` (``info``, ``warning``...), in the
    configured format; ``message`` may hold untrusted text."""
    number = LEVELS[level]
    if _LOGGER.isEnabledFor(number):
        _write(number, event_line(_QUEUE.log_format, iso_time(time.time()), number, event, message))


def _log_format() -> str:
    return _QUEUE.log_format


def _write(level: int, line: str) -> None:
    """Hand a ready line to our queue when our handler is the logger's, else log it as a record."""
    handlers = _LOGGER.handlers
    if len(handlers) == 1 and type(handlers[0]) is _Lines:
        _QUEUE.line(line)
    else:
        _LOGGER.log(level, line, extra={"skills_core_line": True})


# --- files in a state directory ----------------------------------------------------------------


def _write_file(path: str, data: bytes) -> None:
    """Write ``path`` whole (a reader sees the old file or the new one), quietly on failure."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _read_json(path: str) -> object:
    try:
        with open(path, "rb") as file:
            return json.loads(file.read(1 << 20))
    except (OSError, ValueError):
        return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: it exists
        return True
    return True


def read_drain_reports(folder: str) -> tuple[int, int, list[int]]:
    """What the workers that used ``folder`` say of their drains.

    Returns:
        (requests cut off, requests finished during the drains, process ids of workers that
        started and never reported a drain: they died, or were killed).
    """
    cut = finished = 0
    silent: list[int] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return 0, 0, []
    for name in names:
        if not name.startswith(_STARTED_PREFIX):
            continue
        pid = name[len(_STARTED_PREFIX) :]
        report = _read_json(os.path.join(folder, f"{_DRAIN_PREFIX}{pid}.json"))
        if not isinstance(report, dict):
            silent.append(int(pid) if pid.isdigit() else -1)
            continue
        cut += _int(report.get("cut"))
        finished += _int(report.get("finished"))
    return cut, finished, sorted(silent)


def _int(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0
