"""``Host``, ``Origin`` and ``Accept``, parsed whole (HTTP-03, HTTP-04, HTTP-06).

A ``Host`` value is ``host [":" port]`` (RFC 3986 §3.2.2-3: an IP literal in brackets, an IPv4
address or a registered name; a port of digits) and an ``Origin`` is ``scheme "://" host [":"
port]`` with nothing after (RFC 6454 §6.2). A value that only *starts* with an allowed name, such
as ``[::1]evil.example`` or ``127.0.0.1:abc``, is refused: 421 for ``Host``, 403 for ``Origin``.
Each table is fed to the pure functions (``parse_authority``, ``parse_origin``,
``HttpOptions.allows_host``/``allows_origin``) and through the ASGI app, and a few rows through a
real ``serve --http``; hypothesis checks that nothing accepted as loopback has anything after a
valid authority.

``Accept`` is read as media ranges with weights (RFC 9110 §12.4.2, §12.5.1): ``q=0`` means "not
acceptable" and the most specific range naming a type decides, in both eras and for the legacy
``GET``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import pytest
from asgi_harness import (
    INITIALIZE,
    LEGACY,
    base_headers,
    call,
    modern_request,
    replace_header,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skills_core import spec_examples as ex
from skills_core.adapters.asgi import HttpOptions, SkillsApp
from skills_core.http.headers import accepts_json_and_sse, accepts_sse, media_ranges
from skills_core.http.options import parse_authority, parse_origin
from skills_core.server.handler import SkillsServer

FILES: Final = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}
DEFAULTS: Final = HttpOptions()


def make_app(options: HttpOptions = DEFAULTS) -> SkillsApp:
    server = SkillsServer.from_files(FILES, cursor_key=b"c" * 32)
    return SkillsApp(server, session_key=b"s" * 32, options=options)


APP: Final = make_app()
_DISCOVER_HEADERS, DISCOVER = modern_request("server/discover")


def status_with(app: SkillsApp, name: str, value: str) -> int:
    """The status of a good ``server/discover`` with header ``name`` set to ``value``."""
    return call(
        app, "POST", "/mcp", replace_header(_DISCOVER_HEADERS, name, value), [DISCOVER]
    ).status


# --- Host ----------------------------------------------------------------------------------------

#: (Host value, accepted by the default allow-list: loopback names, any port).
HOSTS: Final = [
    ("127.0.0.1:8000", True),
    ("127.0.0.1", True),
    ("localhost", True),
    ("LOCALHOST:1", True),
    ("localhost:65535", True),
    ("localhost:0", True),
    ("[::1]", True),
    ("[::1]:9", True),
    # the review's findings: a loopback name with something after it
    ("[::1]evil.example", False),
    ("127.0.0.1:abc", False),
    # more of the same family
    ("[::1]evil.example:80", False),
    ("[::1]:80evil", False),
    ("[::1].evil.example", False),
    ("127.0.0.1:80:80", False),
    ("[::1]:80:80", False),
    ("localhost:", False),
    ("[::1]:", False),
    ("localhost:65536", False),
    ("localhost:123456", False),
    ("localhost:+80", False),
    ("localhost:-1", False),
    ("localhost:8 0", False),
    ("localhost:\u00b9", False),  # a superscript one: str.isdigit() says yes
    ("localhost:8000/", False),
    ("localhost/x", False),
    ("localhost?x", False),
    ("localhost#x", False),
    ("user@localhost", False),
    ("localhost@evil.example", False),
    ("localhost:8000@evil.example", False),
    ("localhost.evil.example", False),
    ("evil.example", False),
    ("localhost ", False),
    (" localhost", False),
    ("localhost\t", False),
    ("local host", False),
    ("localhost.", False),  # the same host by DNS, not the name on the list
    ("127.1", False),
    ("0x7f.0.0.1", False),
    ("::1", False),
    ("[::1", False),
    ("::1]", False),
    ("[::1]]", False),
    ("[[::1]]", False),
    ("[0:0:0:0:0:0:0:1]", False),  # an equal address, not the text on the list
    ("[fe80::1%25eth0]", False),
    ("[::1%25lo]", False),
    ("[zz::1]", False),
    ("[]", False),
    ("", False),
    (":8000", False),
    ("localhost,evil.example", False),
]


@pytest.mark.parametrize(("value", "accepted"), HOSTS)
def test_host_values_http_04(value: str, accepted: bool) -> None:
    assert DEFAULTS.allows_host(value) is accepted
    assert status_with(APP, "host", value) == (200 if accepted else 421)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("Example.COM:8080", ("example.com", 8080)),
        ("example.com", ("example.com", None)),
        ("127.0.0.1:1", ("127.0.0.1", 1)),
        ("[::1]:65535", ("[::1]", 65535)),
        ("[2001:DB8::7]", ("[2001:db8::7]", None)),
        ("[::ffff:127.0.0.1]:80", ("[::ffff:127.0.0.1]", 80)),
        ("[v1.fe:x]:80", ("[v1.fe:x]", 80)),  # IPvFuture
        ("a-b_c~d!$&'()*+,;=%41:1", ("a-b_c~d!$&'()*+,;=%41", 1)),  # every reg-name character
        ("my%2", None),
        ("my%zz", None),
        ("[::1]x", None),
        ("[v1.]", None),
        ("[::1::2]", None),
        ("é.example", None),
        ("x:080", ("x", 80)),
    ],
)
def test_parse_authority(text: str, parsed: tuple[str, int | None] | None) -> None:
    assert parse_authority(text) == parsed


def test_a_listed_port_is_the_only_port_of_an_exact_pattern() -> None:
    app = make_app(HttpOptions(allowed_hosts=("skills.example.com:443", "[::1]:*", "other")))
    for value, status in [
        ("skills.example.com:443", 200),
        ("SKILLS.example.com:443", 200),
        ("skills.example.com", 421),
        ("skills.example.com:80", 421),
        ("skills.example.com:443abc", 421),
        ("skills.example.com:443/", 421),
        ("[::1]:1", 200),
        ("[::1]evil:1", 421),
        ("other:9", 200),
        ("other", 200),
        ("other.example", 421),
        ("localhost", 421),
    ]:
        assert status_with(app, "host", value) == status, value


@pytest.mark.parametrize(
    "pattern",
    ["", ":80", "[::1]x", "[::1]x:*", "name:abc", "name:", "name:*x", "name:**", "a b", "[::1",
     "name:70000", "http://name", "name/"],
)  # fmt: skip
def test_malformed_host_patterns_are_refused_when_the_options_are_made(pattern: str) -> None:
    with pytest.raises(ValueError, match="not a host pattern"):
        HttpOptions(allowed_hosts=(pattern,))


def test_any_host_is_still_one_switch() -> None:
    """``allowed_hosts=None`` turns the check off: nothing about the value is looked at."""
    assert status_with(make_app(HttpOptions(allowed_hosts=None)), "host", "[::1]evil") == 200


# --- Origin --------------------------------------------------------------------------------------

#: (Origin value, accepted by the default allow-list: http on the loopback names, any port).
ORIGINS: Final = [
    ("http://localhost:3000", True),
    ("http://localhost", True),
    ("http://127.0.0.1:8000", True),
    ("http://[::1]:8080", True),
    ("HTTP://LOCALHOST:1", True),
    # the review's findings
    ("http://[::1]evil.example", False),
    ("http://127.0.0.1:evil.example", False),
    # more of the same family
    ("http://[::1]evil.example:80", False),
    ("http://localhost:3000/", False),
    ("http://localhost:3000/path", False),
    ("http://localhost/", False),
    ("http://localhost:3000?x", False),
    ("http://localhost:3000#x", False),
    ("http://localhost:abc", False),
    ("http://localhost:", False),
    ("http://localhost:99999", False),
    ("http://localhost:\u00b9", False),
    ("http://user@localhost:3000", False),
    ("http://localhost:3000@evil.example", False),
    ("http://localhost.evil.example", False),
    ("http://localhost:3000 http://evil.example", False),
    ("http://[::1]:80:80", False),
    ("http://evil.example", False),
    ("https://localhost:3000", False),  # another scheme: another origin
    ("ws://localhost:3000", False),
    ("null", False),
    ("", False),
    ("localhost:3000", False),
    ("//localhost:3000", False),
    ("http:/localhost", False),
    ("http://", False),
    ("http:// localhost", False),
]


@pytest.mark.parametrize(("value", "accepted"), ORIGINS)
def test_origin_values_http_03(value: str, accepted: bool) -> None:
    assert DEFAULTS.allows_origin(value) is accepted
    assert status_with(APP, "origin", value) == (200 if accepted else 403)


def test_parse_origin() -> None:
    assert parse_origin("HTTPS://App.Example") == ("https", "app.example", None)
    assert parse_origin("http://[::1]:80") == ("http", "[::1]", 80)
    assert parse_origin("http://[::1]x") is None
    assert parse_origin("file://") is None


def test_exact_origin_patterns() -> None:
    options = HttpOptions(
        allowed_origins=("https://app.example", "https://ports.example:8443", "http://[::1]:*")
    )
    app = make_app(options)
    for value, status in [
        ("https://app.example", 200),
        ("https://APP.example", 200),
        ("https://app.example:443", 403),  # a browser leaves the default port out
        ("https://app.example/", 403),
        ("https://app.example.evil", 403),
        ("https://ports.example:8443", 200),
        ("https://ports.example:08443", 200),  # the same port number
        ("https://ports.example:8444", 403),
        ("https://ports.example:8443x", 403),
        ("http://[::1]:1", 200),
        ("http://[::1]", 200),
        ("http://[::1]evil:1", 403),
    ]:
        assert status_with(app, "origin", value) == status, value


@pytest.mark.parametrize(
    "pattern",
    ["localhost", "http://", "http://x/", "http://x:abc", "http://[::1]x:*", "ftp://x",
     "http://user@x", "null", "http://x:*/", "http://x:*:*", "*"],
)  # fmt: skip
def test_malformed_origin_patterns_are_refused_when_the_options_are_made(pattern: str) -> None:
    with pytest.raises(ValueError, match="not an origin pattern"):
        HttpOptions(allowed_origins=(pattern,))


# --- nothing after a valid authority is ever accepted as loopback (hypothesis) ------------------

#: What the loopback allow-lists accept, written out: a loopback name, then at most a port.
_LOOPBACK_HOST: Final = re.compile(
    r"(localhost|127\.0\.0\.1|\[::1\])(:(?P<port>[0-9]{1,5}))?", re.I
)
_LOOPBACK_ORIGIN: Final = re.compile(
    r"http://(localhost|127\.0\.0\.1|\[::1\])(:(?P<port>[0-9]{1,5}))?", re.I
)
#: Characters that matter to an authority's grammar, and some that do not belong in one.
_NOISE: Final = st.text(alphabet=":[]@/.%?#*,;=~0123456789abcdefvxLH- \t\u00b9\u00e9", max_size=10)
_PREFIXES: Final = st.sampled_from(
    ["localhost", "LocalHost", "127.0.0.1", "[::1]", "[::1", "::1]", "", "127.0.0.", "http://"]
)


def _loopback_verdict(pattern: re.Pattern[str], value: str) -> bool:
    match = pattern.fullmatch(value)
    return match is not None and (match["port"] is None or int(match["port"]) <= 0xFFFF)


@settings(max_examples=400)
@given(
    value=st.one_of(
        st.tuples(_PREFIXES, _NOISE).map("".join),
        st.tuples(_PREFIXES, _PREFIXES, _NOISE).map("".join),
        st.text(max_size=20),
    )
)
@example("[::1]evil.example")
@example("127.0.0.1:abc")
def test_no_host_accepted_as_loopback_has_anything_after_its_authority(value: str) -> None:
    accepted = DEFAULTS.allows_host(value)
    assert accepted == _loopback_verdict(_LOOPBACK_HOST, value)
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return  # not a header value an ASGI server could hand over
    assert status_with(APP, "host", value) == (200 if accepted else 421)


@settings(max_examples=400)
@given(
    value=st.one_of(
        st.tuples(st.just("http://"), _PREFIXES, _NOISE).map("".join),
        st.tuples(st.sampled_from(["http://", "HTTP://", "https://", "http:/"]), _NOISE).map(
            "".join
        ),
        st.text(max_size=20),
    )
)
@example("http://[::1]evil.example")
@example("http://127.0.0.1:evil.example")
def test_no_origin_accepted_as_loopback_has_anything_after_its_authority(value: str) -> None:
    accepted = DEFAULTS.allows_origin(value)
    assert accepted == _loopback_verdict(_LOOPBACK_ORIGIN, value)
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return
    assert status_with(APP, "origin", value) == (200 if accepted else 403)


def test_through_a_real_server(tmp_path: Path) -> None:
    """The review's four values and ``Accept: */*;q=0`` over a socket, to ``serve --http``."""
    from http_helpers import exchange, modern_headers, serving
    from interop_helpers import write_spec_skill

    write_spec_skill(tmp_path / "skills")
    headers = modern_headers("server/discover")
    with serving(tmp_path / "skills") as served:
        for change, status in [
            ({}, 200),
            ({"Host": "[::1]evil.example"}, 421),
            ({"Host": "127.0.0.1:abc"}, 421),
            ({"Origin": "http://[::1]evil.example"}, 403),
            ({"Origin": "http://127.0.0.1:evil.example"}, 403),
            ({"Origin": f"http://127.0.0.1:{served.port}"}, 200),
            ({"Accept": "*/*;q=0"}, 406),
            ({"Accept": "*/*"}, 200),
        ]:
            answer = exchange(served.port, "POST", "/mcp", {**headers, **change}, DISCOVER)
            assert answer.status == status, change


# --- Accept ---------------------------------------------------------------------------------------

#: (Accept value, acceptable for a POST: application/json and text/event-stream both, weight > 0).
ACCEPTS: Final = [
    ("application/json, text/event-stream", True),
    ("*/*", True),
    ("application/*, text/*", True),
    ("application/json;q=0.5, text/event-stream;q=0.001", True),
    ("APPLICATION/JSON;Q=1.000, Text/Event-Stream;q=1", True),
    ("application/json ; q=0.9 , text/event-stream", True),
    ("application/json;charset=utf-8, text/event-stream", True),
    ('application/json;x="a,b;q=0", text/event-stream', True),  # q=0 inside a quoted string
    ('application/json;x="a\\",q=0", text/event-stream', True),  # still inside: \" is escaped
    ('application/json;x="a\\\\";q=0, text/event-stream', False),  # \\ is, and " ends it
    ("*/*;q=0, application/json, text/event-stream", True),  # the specific ranges decide
    ("application/json,,text/event-stream", True),
    ("application/json;q=0.5;level=1, text/event-stream", True),  # after the weight: not ours
    ("text/html, */*", True),
    # q=0 is "not acceptable" (RFC 9110 §12.4.2)
    ("*/*;q=0", False),
    ("*/*; q=0.000", False),
    ("application/json;q=0, text/event-stream", False),
    ("application/json, text/event-stream;q=0", False),
    ("application/json;q=0, */*", False),
    ("text/event-stream;q=0, */*", False),
    ("application/*;q=0, application/json;q=0, text/event-stream", False),
    ("application/*;q=0, text/event-stream", False),
    ("text/*;q=0, application/json", False),
    # a weight that is not a qvalue counts as 0
    ("application/json;q=abc, text/event-stream", False),
    ("application/json;q=1.0001, text/event-stream", False),
    ("application/json;q=2, text/event-stream", False),
    ("application/json;q=-1, text/event-stream", False),
    ("application/json;q=, text/event-stream", False),
    ("application/json;q=.5, text/event-stream", False),
    # not the types
    ("application/json", False),
    ("text/event-stream", False),
    ("text/html", False),
    ("application/jsonx, text/event-stream", False),
    ("*/json, text/event-stream", False),  # not a media range
    ("application, text/event-stream", False),
    ("", False),
]


@pytest.mark.parametrize(("value", "acceptable"), ACCEPTS)
def test_accept_in_both_eras_http_06(value: str, acceptable: bool) -> None:
    assert accepts_json_and_sse(value.encode()) is acceptable
    expected = 200 if acceptable else 406
    assert status_with(APP, "accept", value) == expected  # modern
    legacy = replace_header(base_headers(), "accept", value)
    assert call(APP, "POST", "/mcp", legacy, [INITIALIZE]).status == expected
    versioned = [*legacy, ("mcp-protocol-version", LEGACY)]
    assert call(APP, "POST", "/mcp", versioned, [INITIALIZE]).status == expected


@pytest.mark.parametrize(
    ("value", "sse"),
    [
        (None, True),
        ("text/event-stream", True),
        ("*/*", True),
        ("text/*", True),
        ("*/*;q=0", False),
        ("text/event-stream;q=0", False),
        ("text/event-stream;q=0, */*", False),
        ("text/*;q=0, */*", False),
        ("*/*;q=0, text/event-stream;q=0.1", True),
        ("application/json", False),
    ],
)
def test_accept_of_a_legacy_get(value: str | None, sse: bool) -> None:
    """A legacy ``GET`` that does not accept an event stream is 406; one that does, 405 (this
    server offers no GET stream)."""
    assert accepts_sse(None if value is None else value.encode()) is sse
    headers = [("host", "127.0.0.1:8000")] + ([] if value is None else [("accept", value)])
    assert call(APP, "GET", "/mcp", headers).status == (405 if sse else 406)


# The weights of a generated Accept value, computed from its parts rather than from its text.
_TYPES: Final = ["application", "text", "image", "*"]
_SUBTYPES: Final = ["json", "event-stream", "html", "*"]
_WEIGHTS: Final = st.sampled_from(
    [None, "0", "0.0", "0.000", "0.001", "0.5", "1", "1.0", "1.000", "abc", "2", "0.0001", ""]
)


def _weight_of(text: str | None) -> float:
    if text is None:
        return 1.0
    return float(text) if re.fullmatch(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?", text) else 0.0


def _reference(ranges: list[tuple[str, str, str | None]], kind: str, subtype: str) -> bool:
    """RFC 9110 §12.5.1 from the parts: the most specific range naming the type decides."""
    weights: dict[int, list[float]] = {}
    for range_kind, range_subtype, weight in ranges:
        if range_kind == "*" and range_subtype != "*":
            continue  # not a media range
        if (range_kind, range_subtype) == (kind, subtype):
            weights.setdefault(2, []).append(_weight_of(weight))
        elif (range_kind, range_subtype) == (kind, "*"):
            weights.setdefault(1, []).append(_weight_of(weight))
        elif (range_kind, range_subtype) == ("*", "*"):
            weights.setdefault(0, []).append(_weight_of(weight))
    return bool(weights) and max(weights[max(weights)]) > 0


@st.composite
def _accept_values(draw: Any) -> tuple[str, list[tuple[str, str, str | None]]]:
    parts = draw(
        st.lists(
            st.tuples(st.sampled_from(_TYPES), st.sampled_from(_SUBTYPES), _WEIGHTS), max_size=6
        )
    )
    elements = []
    for kind, subtype, weight in parts:
        text = f"{kind}/{subtype}"
        text = draw(st.sampled_from([text, text.upper(), text.title()]))
        if draw(st.booleans()):
            text += draw(st.sampled_from([";charset=utf-8", ';x="q=0, */*"', ";level=1"]))
        if weight is not None:
            q = draw(st.sampled_from(["q", "Q"]))
            text += draw(st.sampled_from([";", " ; ", ";\t"])) + f"{q}={weight}"
        elements.append(text)
    separator = draw(st.sampled_from([",", ", ", " ,", ",\t"]))
    return separator.join(elements), parts


@settings(max_examples=400)
@given(_accept_values())
def test_accept_verdicts_follow_the_weights_of_the_parts(
    case: tuple[str, list[tuple[str, str, str | None]]],
) -> None:
    value, parts = case
    json_ok = _reference(parts, "application", "json")
    sse_ok = _reference(parts, "text", "event-stream")
    raw = value.encode()
    assert accepts_json_and_sse(raw) is (json_ok and sse_ok)
    assert accepts_sse(raw) is sse_ok
    assert len(media_ranges(raw)) == len([p for p in parts if p[0] != "*" or p[1] == "*"])
    assert status_with(APP, "accept", value) == (200 if json_ok and sse_ok else 406)
