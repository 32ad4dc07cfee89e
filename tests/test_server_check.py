"""The live-server check without I/O (``skills_core.server_check``): our own server, in process, is
clean in both eras; each rule the check holds a server to is broken once by rewriting one answer of
that server, and the check names it with its code, at the URI it is about; bounds, failures and the
CI forms (SARIF with logical locations, GitHub commands).

The server is :class:`skills_core.server.SkillsServer` behind ``ServerConnection.handle``; a
"breaker" rewrites the answer to one call on the way back, so every test breaks exactly one rule.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import sarif_check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import meta, server, skill_md, spec_files

from skills_core.ci import server_github_commands, server_sarif
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era
from skills_core.rules import RULES
from skills_core.server_check import Call, CheckBounds, Reply, ServerCheckResult, run_check
from skills_core.validation import Severity

ROOT = "skill://pdf-processing"
SKILL = f"{ROOT}/SKILL.md"
INVOICE = f"{ROOT}/templates/invoice.md"

#: Rewrites the answer to one call (the answer as JSON: {"result": ...} or {"error": ...}).
Breaker = Callable[[Call, dict[str, Any]], dict[str, Any]]


def keep(call: Call, response: dict[str, Any]) -> dict[str, Any]:
    return response


def check(
    files: dict[str, bytes] | None = None,
    *,
    era: Era = Era.MODERN,
    breaker: Breaker = keep,
    bounds: CheckBounds | None = None,
    capabilities: Callable[[dict[str, Any]], Any] = lambda caps: caps,
    calls: list[Call] | None = None,
    **options: Any,
) -> ServerCheckResult:
    """Check our server over ``files`` (default: the spec's skill), answers passed through
    ``breaker``."""
    srv = server(spec_files() if files is None else files, **options)
    legacy = era is Era.LEGACY
    connection = srv.connection(legacy_version="2025-11-25" if legacy else None)
    number = 0

    def respond(call: Call) -> Reply:
        nonlocal number
        number += 1
        if calls is not None:
            calls.append(call)
        assert ("_meta" in call.params) is not legacy  # CAP-10: modern requests carry _meta
        message = {"jsonrpc": "2.0", "id": number, "method": call.method, "params": call.params}
        answered = connection.handle(message)
        assert answered is not None
        response: dict[str, Any] = breaker(call, copy.deepcopy(dict(answered)))
        if "error" in response:
            return Reply.error(response["error"]["code"], response["error"].get("message", ""))
        return Reply.ok(response["result"])

    caps = srv.capabilities()
    return run_check(
        respond,
        "srv",
        era=era,
        capabilities=capabilities(copy.deepcopy(caps)),
        meta=None if legacy else meta(),
        bounds=bounds,
    )


def codes(result: ServerCheckResult) -> set[str]:
    return {finding.code for _, finding in result.report.all_findings()}


def where(result: ServerCheckResult, code: str) -> list[tuple[str | None, str | None]]:
    """``(skill uri, finding file)`` of every finding of ``code``."""
    return [
        (skill.uri if skill is not None else None, finding.file)
        for skill, finding in result.report.all_findings()
        if finding.code == code
    ]


def on(
    method: str, change: Callable[[dict[str, Any], dict[str, Any]], None], *, uri: str = ""
) -> Breaker:
    """A breaker that applies ``change(params, response)`` to answers to ``method`` (of ``uri``)."""

    def breaker(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        if call.method == method and (not uri or call.params.get("uri") == uri):
            change(call.params, response)
        return response

    return breaker


# --- clean ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
@pytest.mark.parametrize("directory_read", [True, False])
def test_our_server_is_clean_in_both_eras(era: Era, directory_read: bool) -> None:
    files = {**spec_files(), **spec_files("acme/billing/refunds/")}
    files["acme/billing/refunds/SKILL.md"] = skill_md("refunds", "Refunds.")
    calls: list[Call] = []
    result = check(files, era=era, directory_read=directory_read, page_size=1, calls=calls)
    assert codes(result) == set()
    assert result.failures == ()
    assert result.files_read == 6  # every listed file, once
    assert result.report.summary()["skills"] == 2
    methods = [call.method for call in calls]
    assert methods.count("skills/list") == 2  # page size 1: one page per skill (LIST-07)
    assert methods.count("skills/get") == 2 + 1  # each skill, and the unknown one (ERR-01)
    assert ("resources/directory/read" in methods) is True  # walked, or probed once if undeclared
    if not directory_read:
        assert methods.count("resources/directory/read") == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=5, unique=True
    ),
    page_size=st.integers(1, 4),
    modern=st.booleans(),
    extra=st.dictionaries(
        st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6})?\.md", fullmatch=True),
        st.binary(max_size=40),
        max_size=3,
    ),
)
def test_any_catalog_of_ours_is_clean(
    names: list[str], page_size: int, modern: bool, extra: dict[str, bytes]
) -> None:
    files: dict[str, bytes] = {}
    for name in names:
        files[f"{name}/SKILL.md"] = skill_md(name, f"The {name} skill.")
        for path, data in extra.items():
            files[f"{name}/{path}"] = data
    result = check(files, era=Era.MODERN if modern else Era.LEGACY, page_size=page_size)
    assert codes(result) == set()
    assert result.files_read == len(files)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_changed_byte_is_found_at_its_file(data: st.DataObject) -> None:
    """VER-06, VER-07: bytes served other than listed are a size or digest mismatch of that file."""
    files = spec_files()
    path = data.draw(st.sampled_from(sorted(files)))
    uri = f"skill://{path}"
    original = files[path]
    grow = data.draw(st.booleans())
    position = data.draw(st.integers(0, len(original) - 1))
    changed = (  # ASCII stays ASCII: the text served has these bytes
        original + b"x"
        if grow
        else original[:position] + bytes([original[position] ^ 0x20]) + original[position + 1 :]
    )

    def serve_changed(params: dict[str, Any], response: dict[str, Any]) -> None:
        response["result"]["contents"][0]["text"] = changed.decode()

    result = check(files, breaker=on("resources/read", serve_changed, uri=uri))
    code = "server-size-mismatch" if grow else "server-digest-mismatch"
    assert where(result, code) == [(SKILL, uri)]


# --- one rule broken each ------------------------------------------------------------------------


def _drop(key: str) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def change(params: dict[str, Any], response: dict[str, Any]) -> None:
        response["result"].pop(key)

    return change


def _error(code: int) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def change(params: dict[str, Any], response: dict[str, Any]) -> None:
        response.pop("result", None)
        response["error"] = {"code": code, "message": "no\x1b[2K"}

    return change


def _set(key: str, value: Any) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def change(params: dict[str, Any], response: dict[str, Any]) -> None:
        response["result"][key] = value

    return change


def _skill_field(key: str, value: Any) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def change(params: dict[str, Any], response: dict[str, Any]) -> None:
        response["result"]["skill"][key] = value

    return change


def _frontmatter(call: Call, response: dict[str, Any]) -> dict[str, Any]:
    """The entry (listed and got) gains a field its SKILL.md does not have."""
    result = response.get("result", {})
    for entry in [*result.get("skills", ()), *([result["skill"]] if "skill" in result else [])]:
        if entry["uri"] == SKILL:
            entry["frontmatter"]["license"] = "MIT"
    return response


def _second_item(params: dict[str, Any], response: dict[str, Any]) -> None:
    item = response["result"]["contents"][0]
    response["result"]["contents"].append({**item, "uri": f"{ROOT}/other.md"})


def _omit_child(params: dict[str, Any], response: dict[str, Any]) -> None:
    if params["uri"] == f"{ROOT}/templates":
        response["result"]["resources"] = response["result"]["resources"][:1]


BROKEN: dict[str, tuple[str, Breaker, str | None]] = {
    # name: (code, breaker, the URI the finding is at: None for the server's own)
    "LIST-01 list fails": ("server-list-failed", on("skills/list", _error(-32603)), None),
    "LIST-03 no resultType": ("server-result-type", on("skills/list", _drop("resultType")), None),
    "LIST-09 no ttlMs": ("server-ttl-ms", on("skills/list", _drop("ttlMs")), None),
    "LIST-09 bad scope": ("server-cache-scope", on("skills/list", _set("cacheScope", "all")), None),
    "GET-05 no ttlMs": ("server-ttl-ms", on("skills/get", _drop("ttlMs"), uri=SKILL), None),
    "GET-04 bad resultType": (
        "server-result-type",
        on("skills/get", _set("resultType", "input_required"), uri=SKILL),
        None,
    ),
    "GET-03 get fails": ("server-get-failed", on("skills/get", _error(-32602), uri=SKILL), SKILL),
    "GET-06 other uri": (
        "server-get-uri",
        on("skills/get", _skill_field("uri", "skill://x/SKILL.md"), uri=SKILL),
        SKILL,
    ),
    "GET-06 differs": (
        "server-get-differs",
        on(
            "skills/get",
            _skill_field("frontmatter", {"name": "pdf-processing", "description": "d"}),
            uri=SKILL,
        ),
        SKILL,
    ),
    "GET-09 cursor": (
        "server-get-cursor",
        on("skills/get", _set("nextCursor", "c"), uri=SKILL),
        SKILL,
    ),
    "VER-01 read fails": (
        "server-read-failed",
        on("resources/read", _error(-32603), uri=INVOICE),
        INVOICE,
    ),
    "VER-17 two items": (
        "server-read-contents",
        on("resources/read", _second_item, uri=INVOICE),
        INVOICE,
    ),
    "ENTRY-04 frontmatter": ("server-frontmatter-mismatch", _frontmatter, SKILL),
    "CAP-05 directory fails": (
        "server-directory-unanswered",
        on("resources/directory/read", _error(-32601), uri=ROOT),
        ROOT,
    ),
    "DIR-06 child missing": (
        "server-directory-disagrees",
        on("resources/directory/read", _omit_child),
        f"{ROOT}/templates/purchase-order.md",
    ),
    "ERR-01 unknown skill": (
        "server-error-code",
        on("skills/get", _error(-32603), uri="skill://skills-core-check-absent/SKILL.md"),
        None,
    ),
    "ERR-03 unknown file": (
        "server-error-code",
        on("resources/read", _error(-32603), uri=f"{ROOT}/skills-core-check-absent.md"),
        None,
    ),
    "ERR-02 not a directory": (
        "server-error-code",
        on("resources/directory/read", _error(-32600), uri=SKILL),
        None,
    ),
    "FMT-08 resource name": (
        "server-resources-list",
        on("resources/list", lambda p, r: r["result"]["resources"][0].update(name="PDF")),
        SKILL,
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_rule_is_found_with_its_code_and_place(name: str) -> None:
    code, breaker, at = BROKEN[name]
    result = check(breaker=breaker)
    assert codes(result) == {code}, result.report.to_json()
    ((skill, file),) = where(result, code)
    assert file == at
    if at is not None:
        assert skill == SKILL  # grouped under its skill
    assert result.report.passes() is (RULES[code].severity is not Severity.ERROR)


def test_the_cache_fields_are_not_asked_of_the_legacy_era() -> None:
    """LIST-09 is a 2026-07-28 rule: a legacy answer without ttlMs breaks nothing."""
    breaker = on("skills/list", _drop("ttlMs"))
    assert codes(check(breaker=breaker, era=Era.MODERN)) == {"server-ttl-ms"}

    def strip(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        result = response.get("result")
        if isinstance(result, dict):
            for key in ("ttlMs", "cacheScope", "resultType"):
                result.pop(key, None)
        return response

    assert codes(check(breaker=strip, era=Era.LEGACY)) == set()


def test_a_repeated_finding_is_said_once_with_a_count() -> None:
    files = {**spec_files(), "b/SKILL.md": skill_md("b", "B."), "c/SKILL.md": skill_md("c", "C.")}
    result = check(files, page_size=1, breaker=on("skills/list", _drop("ttlMs")))
    (finding,) = result.report.findings
    assert finding.code == "server-ttl-ms"
    assert finding.message.endswith("(and in 2 more answers)")


def test_a_skill_listed_twice_and_a_cursor_given_again() -> None:
    """LIST-07, LIST-08: pages that overlap, and a cursor that leads back."""
    files = {**spec_files(), "b/SKILL.md": skill_md("b", "B.")}
    first: dict[str, Any] = {}

    def overlap(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        if call.method == "skills/list":
            result = response["result"]
            if "cursor" not in call.params:
                first.update(result)
            else:
                result["skills"] = first["skills"] + result["skills"]
                result["nextCursor"] = first["nextCursor"]
        return response

    result = check(files, page_size=1, breaker=overlap)
    assert where(result, "server-duplicate-skill") == [("skill://b/SKILL.md", "skill://b/SKILL.md")]
    assert where(result, "server-cursor-loop") == [(None, None)]


def test_a_cursor_that_fails_when_sent_back() -> None:
    files = {**spec_files(), "b/SKILL.md": skill_md("b", "B.")}

    def refuse(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        if call.method == "skills/list" and "cursor" in call.params:
            return {"error": {"code": -32602, "message": "bad cursor"}}
        return response

    result = check(files, page_size=1, breaker=refuse)
    assert codes(result) == {"server-cursor-failed"}
    assert result.report.summary()["skills"] == 1  # what page 1 gave is still checked


def test_an_unlisted_file_the_server_serves_is_found() -> None:
    """ENTRY-08: a file a directory read shows and resources/read serves, the entry lacking it."""
    files = spec_files()
    hidden = f"{ROOT}/templates/purchase-order.md"

    def unlist(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        if call.method == "skills/list":
            for entry in response["result"]["skills"]:
                entry["resources"] = [r for r in entry["resources"] if r["uri"] != hidden]
        if call.method == "skills/get":
            response = copy.deepcopy(response)
            skill = response.get("result", {}).get("skill")
            if skill:
                skill["resources"] = [r for r in skill["resources"] if r["uri"] != hidden]
        return response

    result = check(files, breaker=unlist)
    assert codes(result) == {"server-unlisted-file"}
    assert where(result, "server-unlisted-file") == [(SKILL, hidden)]


def test_capabilities() -> None:
    """CAP-01, CAP-07, CAP-02/SIL-15."""
    ext = "io.modelcontextprotocol/skills"

    def no_extension(caps: dict[str, Any]) -> Any:
        caps["extensions"][ext] = True
        return caps

    result = check(capabilities=no_extension)
    assert codes(result) == {"server-no-extension"}
    assert result.requests == 0  # nothing else is asked (CAP-08)

    def no_resources(caps: dict[str, Any]) -> Any:
        del caps["resources"]
        return caps

    assert codes(check(capabilities=no_resources)) == {"server-no-resources"}

    def string_flag(caps: dict[str, Any]) -> Any:
        caps["extensions"][ext]["directoryRead"] = "true"
        return caps

    # Only JSON true declares directory reads: the walk then finds them answered, undeclared.
    assert codes(check(capabilities=string_flag)) == {
        "server-directory-read-value",
        "server-directory-undeclared",
    }


def test_a_dynamic_skill_has_its_frontmatter_checked_only() -> None:
    def dynamic(call: Call, response: dict[str, Any]) -> dict[str, Any]:
        result: Any = response.get("result")
        if call.method == "skills/list":
            for entry in result["skills"]:
                entry["resources"] = "dynamic"
        elif call.method == "skills/get" and result:
            result["skill"]["resources"] = "dynamic"
        return response

    calls: list[Call] = []
    result = check(breaker=dynamic, calls=calls)
    assert codes(result) == {"server-dynamic-skill"}
    reads = [c.params["uri"] for c in calls if c.method == "resources/read"]
    assert reads[0] == SKILL
    assert INVOICE not in reads
    assert result.report.passes(strict=True)  # a note never fails


# --- bounds and failures -------------------------------------------------------------------------


def test_bounds_stop_the_walk_with_a_note() -> None:
    files = {**spec_files(), "b/SKILL.md": skill_md("b", "B."), "c/SKILL.md": skill_md("c", "C.")}
    calls: list[Call] = []
    result = check(files, bounds=CheckBounds(max_entries=1), calls=calls)
    assert codes(result) == {"server-check-incomplete"}
    assert result.report.summary()["skills"] == 1
    assert sum(c.method == "skills/list" for c in calls) == 1
    small = check(bounds=CheckBounds(max_read_bytes=160))
    assert codes(small) == {"server-check-incomplete"}
    assert small.files_read == 1  # SKILL.md (151 bytes); the next file would pass 160


def test_a_request_without_an_answer_ends_the_walk() -> None:
    calls: list[Call] = []

    def respond(call: Call) -> Reply:
        calls.append(call)
        if call.method == "skills/get":
            return Reply.failed("no answer within 10 seconds")
        entry: JSONValue = {
            "uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "A."},
            "resources": "dynamic",
        }
        return Reply.ok(
            {"skills": [entry], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
        )

    caps: dict[str, Any] = {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}}
    result = run_check(respond, "slow", era=Era.MODERN, capabilities=caps, meta=meta())
    assert [c.method for c in calls] == ["skills/list", "skills/get"]
    assert result.failures == (
        "server 'slow': skills/get of skill://a/SKILL.md: no answer within 10 seconds",
    )
    assert result.report.summary()["skills"] == 1  # what was found before is kept


def test_a_hostile_listing_costs_bounded_requests() -> None:
    """A server whose every page is new and full never ends on its own: the entry bound ends it."""
    count = 0

    def respond(call: Call) -> Reply:
        nonlocal count
        if call.method != "skills/list":
            return Reply.error(-32602)
        count += 1
        skills: list[JSONValue] = [
            {"uri": f"skill://s{count}x{i}/SKILL.md", "frontmatter": {}, "resources": "dynamic"}
            for i in range(100)
        ]
        return Reply.ok({"skills": skills, "nextCursor": f"c{count}", "resultType": "complete",
                         "ttlMs": 0, "cacheScope": "public"})  # fmt: skip

    caps: dict[str, Any] = {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}}
    result = run_check(
        respond, era=Era.MODERN, capabilities=caps, meta=meta(), bounds=CheckBounds(max_entries=500)
    )
    assert count == 6  # 500 entries at 100 a page, then the bound
    assert "server-check-incomplete" in codes(result)
    assert result.report.summary()["skills"] == 500


# --- the CI forms -------------------------------------------------------------------------------


def _hostile_result() -> ServerCheckResult:
    """A read of the invoice answered with an error whose message is hostile terminal text."""
    evil = "x\n::error file=a::forged\x1b[2K\u202e"

    def hostile(params: dict[str, Any], response: dict[str, Any]) -> None:
        response.pop("result")
        response["error"] = {"code": 1, "message": evil}

    return check(breaker=on("resources/read", hostile, uri=INVOICE))


def test_sarif_has_logical_locations_and_is_structurally_valid() -> None:
    result = check(breaker=on("resources/read", _error(-32603), uri=INVOICE))
    log: Any = server_sarif(result.report, server="srv", exit_code=1)
    assert sarif_check.check(log) == []
    (run,) = log["runs"]
    (finding,) = run["results"]
    assert finding["ruleId"] == "server-read-failed"
    assert run["tool"]["driver"]["rules"][finding["ruleIndex"]]["id"] == "server-read-failed"
    (location,) = finding["locations"]
    assert "physicalLocation" not in location
    assert location["logicalLocations"] == [
        {"name": "invoice.md", "fullyQualifiedName": INVOICE, "kind": "resource"}
    ]
    assert finding["properties"]["skill"] == SKILL
    server_level = check(breaker=on("skills/list", _drop("ttlMs")))
    log = server_sarif(server_level.report, server="srv", failures=["it died"], exit_code=2)
    assert sarif_check.check(log) == []
    (run,) = log["runs"]
    assert run["results"][0]["locations"][0]["logicalLocations"][0]["kind"] == "module"
    assert run["invocations"][0]["executionSuccessful"] is False


def test_server_text_cannot_forge_a_workflow_command_or_escape() -> None:
    result = _hostile_result()
    lines = server_github_commands(result.report, server="srv")
    (line,) = lines  # one finding, one line: a line break in server text cannot start another
    assert line.startswith("::error title=skills-core server-read-failed::srv " + INVOICE)
    for bad in ("\n", "\x1b", "\u202e"):
        assert bad not in line
    log: Any = server_sarif(result.report, server="srv")
    assert "\x1b" not in str(log)
    assert "\u202e" not in str(log)


def test_every_code_the_check_gives_is_a_server_rule_or_an_entry_rule() -> None:
    for name in BROKEN:
        code = BROKEN[name][0]
        assert RULES[code].family == "server"
