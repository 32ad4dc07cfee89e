"""The pure half of operating an HTTP server: log lines, levels, metrics text, refusal reasons.

No process, socket or clock here: :mod:`skills_core.http.logs` and :mod:`skills_core.http.metrics`
take times as values. What they must get right: a line is one line whatever a client sends, and
JSON lines parse back to the values; levels follow the documented table; the metrics text is the
Prometheus format with cumulative buckets; a worker's report survives the round trip and junk is
refused; the reasons behind ``Invalid cursor`` and a refused session are told apart. (The same
through real ``serve --http`` processes: ``tests/test_http_ops.py``.)
"""

from __future__ import annotations

import json
import os
import re

import pytest

from skills_core import spec_examples as ex
from skills_core.http.logs import (
    DEBUG,
    ERROR,
    INFO,
    WARNING,
    RequestLines,
    event_line,
    iso_time,
    request_level,
)
from skills_core.http.metrics import (
    LATENCY_BUCKETS,
    RequestCounters,
    ServerState,
    WorkerReport,
    merge_reports,
    method_label,
    render_metrics,
)
from skills_core.http.session import (
    SESSION_EXPIRED,
    SESSION_FOREIGN,
    SESSION_MALFORMED,
    SessionCodec,
)
from skills_core.jsonrpc import ErrorObject
from skills_core.jsonvalue import JSONValue
from skills_core.server.cursors import (
    CURSOR_FOREIGN,
    CURSOR_MALFORMED,
    CURSOR_OTHER_LISTING,
    CursorCodec,
)
from skills_core.server.handler import SkillsServer

HOSTILE = 'skill://x\n2026-01-01T00:00:00.000Z INFO request status=200 "\x1b[2J\u202e=/SKILL.md'


def line(log_format: str, **changes: object) -> str:
    fields: dict[str, object] = {
        "client": "127.0.0.1:5000",
        "status": 200,
        "verb": "POST",
        "path": "/mcp",
        "method": "resources/read",
        "uri": "skill://pdf-processing/SKILL.md",
        "code": None,
        "size": 1466,
        "seconds": 0.00084,
        "note": None,
    }
    fields.update(changes)
    return RequestLines(log_format).line("2026-07-28T09:30:00.123Z", INFO, **fields)  # type: ignore[arg-type]


def test_iso_time_is_utc_with_milliseconds() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(951782400.5) == "2000-02-29T00:00:00.500Z"
    assert iso_time(4102444799.999) == "2099-12-31T23:59:59.999Z"


def test_a_text_line_has_every_field_in_order() -> None:
    assert line("text") == (
        "2026-07-28T09:30:00.123Z INFO request client=127.0.0.1:5000 status=200 verb=POST "
        "path=/mcp method=resources/read uri=skill://pdf-processing/SKILL.md code=- bytes=1466 "
        "ms=0.840"
    )


def test_a_json_line_parses_back_to_the_values() -> None:
    document = json.loads(line("json", code=-32602, note="why", status=None))
    assert document == {
        "time": "2026-07-28T09:30:00.123Z",
        "level": "info",
        "event": "request",
        "client": "127.0.0.1:5000",
        "status": None,
        "verb": "POST",
        "path": "/mcp",
        "method": "resources/read",
        "uri": "skill://pdf-processing/SKILL.md",
        "code": -32602,
        "bytes": 1466,
        "ms": 0.84,
        "reason": "why",
    }


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_hostile_value_cannot_add_a_line_a_pair_or_an_escape(log_format: str) -> None:
    shown = line(log_format, uri=HOSTILE, path=HOSTILE, note=HOSTILE)
    assert "\n" not in shown
    assert "\x1b" not in shown
    assert "\u202e" not in shown
    if log_format == "json":
        document = json.loads(shown)
        assert document["status"] == 200
        assert set(document) == {
            *("time", "level", "event", "client", "status", "verb", "path", "method"),
            *("uri", "code", "bytes", "ms", "reason"),
        }
    else:
        pairs = re.findall(r' (\w+)=("(?:[^"\\]|\\.)*"|\S+)', shown)
        names = [name for name, _ in pairs]
        assert names == [
            *("client", "status", "verb", "path", "method", "uri", "code", "bytes", "ms"),
            "reason",
        ]


def test_a_long_value_is_cut() -> None:
    document = json.loads(line("json", uri="skill://x/" + "a" * 5000))
    assert len(document["uri"]) < 400
    assert "5,010 characters in all" in document["uri"]


@pytest.mark.parametrize(
    ("status", "code", "probe", "alarm", "level"),
    [
        (200, None, False, False, INFO),
        (200, None, True, False, DEBUG),
        (404, None, False, False, INFO),
        (421, None, False, False, WARNING),
        (403, None, True, False, WARNING),
        (408, None, False, False, WARNING),
        (413, None, False, False, WARNING),
        (415, None, False, False, WARNING),
        (503, None, False, False, WARNING),
        (200, -32602, False, False, INFO),
        (200, -32602, False, True, WARNING),
        (200, -32603, False, False, ERROR),
        (None, None, False, False, INFO),
    ],
)
def test_levels(status: int | None, code: int | None, probe: bool, alarm: bool, level: int) -> None:
    assert request_level(status, code, probe=probe, alarm=alarm) == level


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_an_event_line_escapes_its_message(log_format: str) -> None:
    shown = event_line(log_format, "T", WARNING, "load", HOSTILE, fields={"skills": 3})
    assert "\n" not in shown
    assert "\x1b" not in shown
    if log_format == "json":
        assert json.loads(shown)["skills"] == 3
    else:
        assert shown.startswith("T WARNING load skills=3 ")


def test_method_labels_cannot_grow_without_bound() -> None:
    assert method_label("resources/read") == "resources/read"
    assert method_label("made/up-" + "x" * 40) == "other"
    assert method_label(None) == "none"


def parse(text: str) -> dict[str, float]:
    """Each sample of a Prometheus text answer, by its name and labels; comments checked."""
    samples: dict[str, float] = {}
    for row in text.splitlines():
        if row.startswith("#"):
            assert re.fullmatch(r"# (HELP|TYPE) skills_core_\w+ .+", row), row
            continue
        name, value = row.rsplit(" ", 1)
        assert re.fullmatch(r'skills_core_\w+(\{(\w+="[^"]*",?)+\})?', name), row
        samples[name] = float(value)
    return samples


def test_metrics_text_has_cumulative_buckets_and_every_family() -> None:
    counters = RequestCounters()
    counters.observe("resources/read", 200, 0.0007, 100)
    counters.observe("resources/read", 200, 0.3, 200)
    counters.observe("none", 421, 0.0001, 50)
    state = ServerState(
        in_flight=2, ready=True, skills=1, files=4, scans=1, last_scan=1.5e9, scan_failures=0
    )
    text = render_metrics(counters, state).decode()
    assert text.endswith("\n")
    samples = parse(text)
    read = 'method="resources/read"'
    assert samples[f'skills_core_http_requests_total{{{read},status="200"}}'] == 2
    assert samples['skills_core_http_requests_total{method="none",status="421"}'] == 1
    bucket = "skills_core_http_request_duration_seconds_bucket"
    assert samples[f'{bucket}{{{read},le="0.0005"}}'] == 0
    assert samples[f'{bucket}{{{read},le="0.001"}}'] == 1
    assert samples[f'{bucket}{{{read},le="0.25"}}'] == 1
    assert samples[f'{bucket}{{{read},le="0.5"}}'] == 2
    assert samples[f'{bucket}{{{read},le="+Inf"}}'] == 2
    assert samples[f"skills_core_http_request_duration_seconds_count{{{read}}}"] == 2
    assert samples[f"skills_core_http_response_bytes_total{{{read}}}"] == 300
    for gauge, value in [
        ("skills_core_http_requests_in_flight", 2),
        ("skills_core_ready", 1),
        ("skills_core_catalog_skills", 1),
        ("skills_core_catalog_files", 4),
        ("skills_core_catalog_scans_total", 1),
        ("skills_core_catalog_last_scan_timestamp_seconds", 1.5e9),
        ("skills_core_catalog_scan_failures_total", 0),
        ("skills_core_workers", 1),
    ]:
        assert samples[gauge] == value
    assert len(LATENCY_BUCKETS) + 1 == len([n for n in samples if n.startswith(bucket)]) // 2


def test_reports_round_trip_and_junk_is_refused() -> None:
    counters = RequestCounters()
    counters.observe("skills/list", 200, 0.01, 10)
    report = WorkerReport(worker=7, counters=counters, in_flight=1, scans=2, last_scan=5.0)
    again = WorkerReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again is not None
    assert again.counters.requests == {("skills/list", 200): 1}
    assert (again.worker, again.in_flight, again.scans, again.last_scan) == (7, 1, 2, 5.0)
    junks: list[object] = [None, [], {"format": 2}, {**report.to_json(), "worker": -1}]
    for junk in junks:
        assert WorkerReport.from_json(junk) is None
    bad = report.to_json()
    bad["counters"] = {**counters.to_json(), "latency": {"skills/list": [1, 2]}}
    assert WorkerReport.from_json(bad) is None


def test_merging_keeps_a_stopped_workers_counts_not_its_requests_in_flight() -> None:
    def report(worker: int, requests: int, in_flight: int) -> WorkerReport:
        counters = RequestCounters()
        for _ in range(requests):
            counters.observe("skills/list", 200, 0.001, 1)
        return WorkerReport(worker=worker, counters=counters, in_flight=in_flight, scans=1)

    own = report(1, 3, 0)
    state = ServerState(
        in_flight=1, ready=True, skills=1, files=1, scans=1, last_scan=None, scan_failures=0
    )
    merged, total = merge_reports(
        own, state, [(report(2, 4, 5), True), (report(3, 10, 7), False), (own, True)]
    )
    assert merged.total == 17
    assert (total.in_flight, total.workers, total.scans) == (6, 2, 3)


def test_session_refusals_are_told_apart() -> None:
    codec = SessionCodec(b"k" * 32)
    minted = codec.mint("2025-11-25", expires=100, nonce=b"n" * 16)
    assert codec.open(minted, now=50) == "2025-11-25"
    assert codec.refusal(minted, now=200) == SESSION_EXPIRED
    assert codec.refusal(minted, now=50, principal="someone-else") == SESSION_FOREIGN
    other = SessionCodec(os.urandom(32)).mint("2025-11-25", expires=100, nonce=b"n" * 16)
    assert codec.refusal(other, now=50) == SESSION_FOREIGN
    assert codec.refusal("not an id", now=50) == SESSION_MALFORMED


def test_cursor_refusals_are_told_apart() -> None:
    """The client is told ``Invalid cursor`` for each; :meth:`SkillsServer.refusal_note` says
    why: another key, a cursor of another listing, or not a cursor at all."""
    key = b"c" * 32
    server = SkillsServer.from_files(
        {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}, cursor_key=key
    )
    meta: dict[str, JSONValue] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    cases = [
        (CursorCodec(os.urandom(32)).encode("skills/list", "a"), CURSOR_FOREIGN),
        (CursorCodec(key).encode("resources/list", "a"), CURSOR_OTHER_LISTING),
        ("%%%", CURSOR_MALFORMED),
    ]
    for cursor, reason in cases:
        answer = server.answer("skills/list", {"cursor": cursor, "_meta": meta})
        assert isinstance(answer, ErrorObject)
        assert (answer.code, answer.message) == (-32602, "Invalid cursor")
        assert server.refusal_note(answer) == reason
    assert CursorCodec.well_formed(cases[0][0])
    assert not CursorCodec.well_formed("%%%")
