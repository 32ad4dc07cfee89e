"""An HTTP skills server's counters, and their form in the Prometheus text format.

Theory of operation
-------------------
Each worker counts its own requests in a :class:`RequestCounters` (the adapter times each request
and calls :meth:`~RequestCounters.observe`); ``GET /metrics`` renders them with what the server
says of its catalog (:class:`ServerState`) by :func:`render_metrics`, in the text format
Prometheus scrapes (version 0.0.4), with no library.

Several workers behind one port each answer some scrapes, so each must answer for all, or a
counter would jump from one worker's count to another's: each worker writes a
:class:`WorkerReport` of itself now and then (the adapter, to a directory the workers share) and
the one that answers adds the others' reports to its own (:func:`merge_reports`). A worker that
has stopped keeps its counts in the sum (a counter never goes back), not its requests in flight.
The others' reports are as old as the period they are written at (a second, in the adapter): two
scrapes closer than that, answered by different workers, may see a counter go back.

What is exported (``method`` is a JSON-RPC method this library knows, ``other`` for any other,
``none`` when the request named none, as a refusal before the body was read or a probe):

* ``skills_core_http_requests_total{method,status}``: requests answered, by HTTP status
  (``status="0"``: the client left before an answer);
* ``skills_core_http_request_duration_seconds{method}``: a histogram of the time from a
  request's arrival to its last byte handed to the server (:data:`LATENCY_BUCKETS`);
* ``skills_core_http_response_bytes_total{method}``: bytes of response bodies sent;
* ``skills_core_http_requests_in_flight``: requests being answered now;
* ``skills_core_ready``: 1 when the server has a catalog to serve (what ``/readyz`` says);
* ``skills_core_catalog_skills``, ``skills_core_catalog_files``: skills published, files in
  their manifests;
* ``skills_core_catalog_scans_total``, ``skills_core_catalog_last_scan_timestamp_seconds``:
  catalogs served (the first scan, each re-scan, each skill a read found changed) and when the
  worker first saw the last one (within a second of it);
* ``skills_core_catalog_scan_failures_total``: looks for skills added or removed that failed
  (the catalog was kept);
* ``skills_core_workers``: workers whose counts are in the answer.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeGuard, final

from ..spec import Method

__all__ = [
    "LATENCY_BUCKETS",
    "CONTENT_TYPE",
    "method_label",
    "RequestCounters",
    "ServerState",
    "WorkerReport",
    "merge_reports",
    "render_metrics",
]

#: Upper bounds of the latency histogram's buckets, in seconds (and ``+Inf``).
LATENCY_BUCKETS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
#: The ``Content-Type`` of the text format.
CONTENT_TYPE: Final = b"text/plain; version=0.0.4; charset=utf-8"

_KNOWN_METHODS: Final = frozenset(method.value for method in Method)
_PREFIX: Final = "skills_core_"


def method_label(method: str | None) -> str:
    """The ``method`` label of a request: a method this library knows, ``other``, or ``none``.

    A client names any method it likes; only known ones become labels, so a client cannot make
    the series (and a scraper's memory) grow.
    """
    if method is None:
        return "none"
    return method if method in _KNOWN_METHODS else "other"


@final
class RequestCounters:
    """One worker's request counters (see the module docstring); add to them with
    :meth:`observe`, combine them with :meth:`add`.

    Attributes:
        requests: ``{(method label, status): requests}``.
        latency: ``{method label: [requests per bucket of LATENCY_BUCKETS..., over the last]}``
            (each request counted in one bucket; the text format adds them up).
        latency_sum: ``{method label: seconds}``.
        sent: ``{method label: bytes of response bodies}``.
    """

    __slots__ = ("latency", "latency_sum", "requests", "sent")

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = {}
        self.latency: dict[str, list[int]] = {}
        self.latency_sum: dict[str, float] = {}
        self.sent: dict[str, int] = {}

    def observe(self, method: str, status: int, seconds: float, size: int) -> None:
        """Count a request: its ``method`` label (:func:`method_label`), HTTP status (0 when
        none was sent), time and bytes sent."""
        key = (method, status)
        requests = self.requests
        requests[key] = requests.get(key, 0) + 1
        counts = self.latency.get(method)
        if counts is None:
            counts = self.latency[method] = [0] * (len(LATENCY_BUCKETS) + 1)
        counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.latency_sum[method] = self.latency_sum.get(method, 0.0) + seconds
        self.sent[method] = self.sent.get(method, 0) + size

    @property
    def total(self) -> int:
        """Requests counted."""
        return sum(self.requests.values())

    def add(self, other: RequestCounters) -> None:
        """Add ``other``'s counts to these."""
        for key, count in other.requests.items():
            self.requests[key] = self.requests.get(key, 0) + count
        for method, counts in other.latency.items():
            mine = self.latency.setdefault(method, [0] * (len(LATENCY_BUCKETS) + 1))
            for index, count in enumerate(counts):
                mine[index] += count
        for method, seconds in other.latency_sum.items():
            self.latency_sum[method] = self.latency_sum.get(method, 0.0) + seconds
        for method, size in other.sent.items():
            self.sent[method] = self.sent.get(method, 0) + size

    def to_json(self) -> dict[str, object]:
        """The counters as JSON values (for another worker to read: :meth:`from_json`)."""
        return {
            "requests": [
                [method, status, count] for (method, status), count in self.requests.items()
            ],
            "latency": {method: list(counts) for method, counts in self.latency.items()},
            "latency_sum": dict(self.latency_sum),
            "sent": dict(self.sent),
        }

    @classmethod
    def from_json(cls, data: object) -> RequestCounters | None:
        """Counters written by :meth:`to_json`, or None when ``data`` is not such a thing."""
        if not isinstance(data, dict):
            return None
        counters = cls()
        requests, latency = data.get("requests"), data.get("latency")
        latency_sum, sent = data.get("latency_sum"), data.get("sent")
        if not (
            isinstance(requests, list)
            and isinstance(latency, dict)
            and isinstance(latency_sum, dict)
            and isinstance(sent, dict)
        ):
            return None
        for row in requests:
            if not (
                isinstance(row, list)
                and len(row) == 3
                and isinstance(row[0], str)
                and _count(row[1])
                and _count(row[2])
            ):
                return None
            key = (method_label(row[0]), row[1])
            counters.requests[key] = counters.requests.get(key, 0) + row[2]
        for method, counts in latency.items():
            if not (
                isinstance(counts, list)
                and len(counts) == len(LATENCY_BUCKETS) + 1
                and all(_count(count) for count in counts)
            ):
                return None
            counters.latency[method_label(method)] = list(counts)
        for method, seconds in latency_sum.items():
            if not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
                return None
            counters.latency_sum[method_label(method)] = float(seconds)
        for method, size in sent.items():
            if not _count(size):
                return None
            counters.sent[method_label(method)] = size
        return counters


def _count(value: object) -> TypeGuard[int]:
    return type(value) is int and value >= 0


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerState:
    """What a worker says of itself besides its counters, when it is scraped.

    Attributes:
        in_flight: Requests being answered.
        ready: It has a catalog to serve.
        skills: Skills published.
        files: Files in their manifests.
        scans: Catalogs loaded (the first scan, and each re-scan).
        last_scan: When the last one was loaded (seconds since the epoch), or None.
        scan_failures: Looks for skills added or removed that failed.
        workers: Workers whose counts are included.
    """

    in_flight: int
    ready: bool
    skills: int
    files: int
    scans: int
    last_scan: float | None
    scan_failures: int
    workers: int = 1


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerReport:
    """What one worker tells the others (see the module docstring).

    Attributes:
        worker: Its process id.
        counters: Its request counters.
        in_flight: Its requests in flight when it wrote this.
        scans: Catalogs it loaded.
        last_scan: When it loaded the last one, or None.
        scan_failures: Its failed looks.
    """

    worker: int
    counters: RequestCounters
    in_flight: int = 0
    scans: int = 0
    last_scan: float | None = None
    scan_failures: int = 0

    def to_json(self) -> dict[str, object]:
        """The report as JSON values (:meth:`from_json` reads them)."""
        return {
            "format": 1,
            "worker": self.worker,
            "counters": self.counters.to_json(),
            "in_flight": self.in_flight,
            "scans": self.scans,
            "last_scan": self.last_scan,
            "scan_failures": self.scan_failures,
        }

    @classmethod
    def from_json(cls, data: object) -> WorkerReport | None:
        """A report :meth:`to_json` wrote, or None when ``data`` is not one."""
        if not isinstance(data, dict) or data.get("format") != 1:
            return None
        counters = RequestCounters.from_json(data.get("counters"))
        worker, in_flight = data.get("worker"), data.get("in_flight")
        scans, failures = data.get("scans"), data.get("scan_failures")
        last_scan = data.get("last_scan")
        if (
            counters is None
            or not _count(worker)
            or not _count(in_flight)
            or not _count(scans)
            or not _count(failures)
            or not (last_scan is None or (isinstance(last_scan, (int, float)) and last_scan >= 0))
        ):
            return None
        return cls(
            worker=worker,
            counters=counters,
            in_flight=in_flight,
            scans=scans,
            last_scan=None if last_scan is None else float(last_scan),
            scan_failures=failures,
        )


def merge_reports(
    own: WorkerReport, state: ServerState, others: Iterable[tuple[WorkerReport, bool]]
) -> tuple[RequestCounters, ServerState]:
    """The counters and state of every worker, from the answering one's and the others' reports.

    Args:
        own: The answering worker's report, as of now.
        state: The answering worker's state (its catalog stands for all: they serve the same
            folders).
        others: The other workers' last reports, each with whether that worker still runs
            (a stopped worker's counts stay in the sums; its requests in flight do not).

    Returns:
        The summed counters, and the state with requests in flight, scans, failures and the
        last scan over every worker.
    """
    counters = RequestCounters()
    counters.add(own.counters)
    in_flight, scans, failures = state.in_flight, state.scans, state.scan_failures
    last_scan = state.last_scan
    workers = 1
    for report, running in others:
        if report.worker == own.worker:
            continue
        counters.add(report.counters)
        scans += report.scans
        failures += report.scan_failures
        if report.last_scan is not None and (last_scan is None or report.last_scan > last_scan):
            last_scan = report.last_scan
        if running:
            in_flight += report.in_flight
            workers += 1
    merged = ServerState(
        in_flight=in_flight,
        ready=state.ready,
        skills=state.skills,
        files=state.files,
        scans=scans,
        last_scan=last_scan,
        scan_failures=failures,
        workers=workers,
    )
    return counters, merged


def _label(value: str) -> str:
    """A label value, escaped as the text format requires."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return repr(value)


def _family(lines: list[str], name: str, kind: str, text: str) -> str:
    full = _PREFIX + name
    lines.append(f"# HELP {full} {text}")
    lines.append(f"# TYPE {full} {kind}")
    return full


def render_metrics(counters: RequestCounters, state: ServerState) -> bytes:
    """The metrics in the Prometheus text format (version 0.0.4), UTF-8, ending in a line break.

    Series are sorted by their labels, so the same counts render the same text.
    """
    lines: list[str] = []
    name = _family(lines, "http_requests_total", "counter", "HTTP requests answered.")
    for (method, status), count in sorted(counters.requests.items()):
        lines.append(f'{name}{{method="{_label(method)}",status="{status}"}} {count}')
    name = _family(
        lines,
        "http_request_duration_seconds",
        "histogram",
        "Time from a request's arrival to its last byte handed to the server.",
    )
    bounds = [*LATENCY_BUCKETS, math.inf]
    for method, counts in sorted(counters.latency.items()):
        label = _label(method)
        cumulative = 0
        for bound, count in zip(bounds, counts, strict=True):
            cumulative += count
            lines.append(f'{name}_bucket{{method="{label}",le="{_number(bound)}"}} {cumulative}')
        total = counters.latency_sum.get(method, 0.0)
        lines.append(f'{name}_sum{{method="{label}"}} {_number(total)}')
        lines.append(f'{name}_count{{method="{label}"}} {cumulative}')
    name = _family(lines, "http_response_bytes_total", "counter", "Bytes of response bodies sent.")
    for method, size in sorted(counters.sent.items()):
        lines.append(f'{name}{{method="{_label(method)}"}} {size}')
    gauges: Mapping[str, tuple[str, str, float | None]] = {
        "http_requests_in_flight": ("gauge", "Requests being answered.", state.in_flight),
        "ready": ("gauge", "1 when the server has a catalog to serve.", int(state.ready)),
        "catalog_skills": ("gauge", "Skills published.", state.skills),
        "catalog_files": ("gauge", "Files in the published skills' manifests.", state.files),
        "catalog_scans_total": (
            "counter",
            "Catalogs loaded (first scan and re-scans).",
            state.scans,
        ),
        "catalog_last_scan_timestamp_seconds": (
            "gauge",
            "When the last catalog was loaded, in seconds since the epoch.",
            state.last_scan,
        ),
        "catalog_scan_failures_total": (
            "counter",
            "Looks for skills added or removed that failed (the catalog was kept).",
            state.scan_failures,
        ),
        "workers": ("gauge", "Workers whose counts are included.", state.workers),
    }
    for short, (kind, text, value) in gauges.items():
        if value is None:
            continue
        name = _family(lines, short, kind, text)
        lines.append(f"{name} {_number(value)}")
    return ("\n".join(lines) + "\n").encode("utf-8")
