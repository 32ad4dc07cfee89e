"""Memory stays bounded while the host walks a hostile listing or directory (SIL-17, WG-05).

Before: pages of 300 entries of 512 files each reached 1.5 GB before the 10,000-entry cap stopped
the walk, one page of 200,000 entries was validated whole to keep 10,000, and several servers each
multiplied that. Now the registry keeps at most a per-server and a host-wide budget of manifest
rows and listing bytes (``HostPolicy``), a listing that would pass one stops with a
``ListingPartial`` that names it, and nothing past a cap or a budget is validated. The memory
bounds are asserted with ``tracemalloc`` (not timings): each fails on the code before the change.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

from host_helpers import Harness, of, one, skill_md

from skills_core.host import (
    DirectoryListing,
    EntryRejected,
    Host,
    HostPolicy,
    ListingComplete,
    ListingPartial,
    SendRequest,
    StopReason,
)
from skills_core.host.budgets import entry_footprint
from skills_core.messages import (
    parse_directory_result,
    parse_list_skills_result,
    server_capabilities,
)

MB = 1_000_000
SKILL_MD_DIGEST = "sha256:" + "1" * 64


def entry_text(index: int, files: int, description: str = "d") -> str:
    """One wire entry as JSON text, ``files`` resources (SKILL.md included)."""
    root = f"skill://h/s{index:06d}"
    rows = [f'{{"uri":"{root}/SKILL.md","digest":"{SKILL_MD_DIGEST}","size":100}}']
    rows += [
        f'{{"uri":"{root}/f{j:04d}.md","digest":"sha256:{j:064x}","size":{j + 1}}}'
        for j in range(files - 1)
    ]
    return (
        f'{{"uri":"{root}/SKILL.md","frontmatter":{{"name":"s{index:06d}",'
        f'"description":{json.dumps(description)}}},"resources":[{",".join(rows)}]}}'
    )


def page(first: int, count: int, files: int, cursor: str | None, **kw: Any) -> Any:
    """A ``skills/list`` result decoded as a transport would (every string its own object)."""
    items = ",".join(entry_text(first + i, files, **kw) for i in range(count))
    tail = f',"nextCursor":"{cursor}"' if cursor is not None else ""
    return json.loads(f'{{"resultType":"complete","skills":[{items}]{tail}}}')


def walk(
    host: Host, origin: str, pages: Iterator[Any], measure: Callable[[], None] = lambda: None
) -> list[Any]:
    """Answer the walk's page requests from ``pages`` until it ends; return every effect."""
    effects: list[Any] = host.list_skills(origin)
    out = list(effects)
    while True:
        sends = of(effects, SendRequest)
        if not sends:
            return out
        result = next(pages)
        measure()
        effects = host.on_response(origin, sends[0].token, result=result)
        out += effects
        del result


def endless(count: int, files: int, **kw: Any) -> Iterator[Any]:
    number = 0
    while True:
        yield page(number * count, count, files, f"c{number + 1}", **kw)
        number += 1


def connected(**policy: Any) -> Host:
    host = Host(policy=HostPolicy(**policy))
    host.connect("h", server_capabilities(directory_read=False))
    return host


# Requirement rows: SIL-17, WG-05
def test_maximal_skills_stop_at_the_resource_budget_within_bounded_memory() -> None:
    host = connected()  # the defaults: 50,000 rows per server
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        effects = walk(host, "h", endless(60, 512))
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    partial = one(effects, ListingPartial)
    assert partial.reason is StopReason.RESOURCE_BUDGET
    assert "HostPolicy.max_listed_resources" in partial.message
    assert "'h'" in partial.message
    assert partial.pages == 2  # the second page was not taken whole
    assert host.registry.count("h") == 97  # 97 x 512 rows fit in 50,000
    assert host.registry.usage("h").resources <= host.policy.max_listed_resources
    # What the registry keeps stays near the budget: 97 skills of 512 files are about 14 MB (the
    # code before this change kept all three pages it was sent, and would have gone on to
    # 10,000 such skills, 1.5 GB).
    assert retained < 20 * MB, retained


# Requirement rows: WG-05
def test_entries_past_the_cap_are_never_validated() -> None:
    host = connected(max_entries=100)
    result = page(0, 5_000, 1, None)
    send = one(host.list_skills("h"), SendRequest)
    tracemalloc.start()
    try:
        effects = host.on_response("h", send.token, result=result)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    partial = one(effects, ListingPartial)
    assert (partial.reason, partial.entries) == (StopReason.ENTRY_CAP, 100)
    assert host.registry.count("h") == 100
    # Taking 100 entries peaks at about 0.15 MB; validating all 5,000 to keep 100 (as before)
    # peaked at 3.6 MB.
    assert peak < 1 * MB, peak


def test_the_byte_budget_stops_entries_with_huge_frontmatter() -> None:
    host = connected(max_listing_bytes=100_000)
    effects = walk(host, "h", endless(10, 1, description="x" * 30_000))
    partial = one(effects, ListingPartial)
    assert partial.reason is StopReason.BYTE_BUDGET
    assert "HostPolicy.max_listing_bytes" in partial.message
    assert host.registry.count("h") == 3
    assert host.registry.usage("h").bytes <= 100_000


def test_several_servers_share_a_host_wide_budget() -> None:
    host = Host(policy=HostPolicy(max_listed_resources=1_000, max_total_listed_resources=2_500))
    counts = []
    for label in ("a", "b", "c"):
        host.connect(label, server_capabilities(directory_read=False))
        effects = walk(host, label, endless(4, 100))
        counts.append(host.registry.count(label))
        partial = one(effects, ListingPartial)
        assert partial.reason is StopReason.RESOURCE_BUDGET
    assert counts == [10, 10, 5]
    assert "all servers' entries" in partial.message
    assert "HostPolicy.max_total_listed_resources" in partial.message
    assert host.registry.usage().resources <= 2_500
    # Forgetting a server gives its share back.
    host.forget("a")
    assert host.registry.usage().resources == 1_500
    host.connect("d", server_capabilities(directory_read=False))
    walk(host, "d", endless(4, 100))
    assert host.registry.count("d") == 10


def test_listing_the_same_entries_again_costs_nothing_more() -> None:
    host = connected(max_listed_resources=1_000)
    first = walk(host, "h", iter([page(0, 9, 100, None)]))
    assert one(first, ListingComplete)
    held = host.registry.usage("h")
    assert held.resources == 900
    again = walk(host, "h", iter([page(0, 9, 100, None)]))
    assert one(again, ListingComplete)
    assert host.registry.usage("h") == held
    # A changed entry replaces the old one's cost; it does not add to it.
    bigger = walk(host, "h", iter([page(0, 1, 200, None)]))
    assert one(bigger, ListingComplete)
    assert host.registry.usage("h").resources == 1_000


def test_nothing_after_a_budget_stop_is_looked_at() -> None:
    host = connected(max_listed_resources=250)
    result = page(0, 3, 100, None)
    result["skills"].append({"uri": "skill://bad/SKILL.md"})  # invalid, but past the stop
    send = one(host.list_skills("h"), SendRequest)
    effects = host.on_response("h", send.token, result=result)
    assert one(effects, ListingPartial).reason is StopReason.RESOURCE_BUDGET
    assert not of(effects, EntryRejected)
    assert host.registry.count("h") == 2


def test_refused_entries_count_against_the_byte_budget() -> None:
    h = Harness(max_listing_bytes=20_000)
    bad = [
        {"uri": f"skill://b/s{i}/SKILL.md", "frontmatter": {}, "resources": []} for i in range(50)
    ]
    server = h.add_server("srv")
    server.overrides.append(
        lambda m, p: ("result", {"skills": bad}) if m == "skills/list" else None
    )
    effects = h.list_all("srv")
    rejected = of(effects, EntryRejected)
    assert 0 < len(rejected) < 50
    assert one(effects, ListingPartial).reason is StopReason.BYTE_BUDGET
    assert h.host.registry.usage("srv").bytes <= 20_000


def test_footprint_is_an_estimate_that_never_raises() -> None:
    item = json.loads(entry_text(0, 3))
    footprint = entry_footprint(item)
    assert footprint.resources == 3
    assert footprint.bytes > len(entry_text(0, 3))  # objects and arrays cost more than braces
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    assert entry_footprint(deep).resources == 0
    assert entry_footprint({"resources": [object()]}).resources == 1


def test_parse_list_skills_result_stops_validating_at_max_entries() -> None:
    result = page(0, 50, 1, "next")
    result["skills"][10] = "not an entry"
    parsed = parse_list_skills_result(result, max_entries=5)
    assert (len(parsed.entries), len(parsed.rejected), parsed.unread) == (5, 0, 45)
    assert parsed.next_cursor == "next"
    whole = parse_list_skills_result(result)
    assert (len(whole.entries), len(whole.rejected), whole.unread) == (49, 1, 0)


# Requirement rows: WG-01, WG-05
def test_a_directory_page_of_junk_stops_at_the_cap() -> None:
    h = Harness(max_directory_entries=100)
    server = h.add_server("srv")
    uri = server.add("a", {"SKILL.md": skill_md("a"), "t/x.md": b"x"})
    h.list_all("srv")
    h.load("srv", uri)
    junk = [{"uri": f"file:///etc/{i}"} for i in range(5_000)]
    server.overrides.append(
        lambda m, p: ("result", {"resources": junk}) if m == "resources/directory/read" else None
    )
    listing = one(h.run(h.host.list_dir("srv", uri, "t")), DirectoryListing)
    # Before, all 5,000 were examined and every reason kept, and the listing did not say it
    # was cut short.
    assert listing.partial
    assert len(listing.dropped) == 100
    assert listing.children == ()


def test_parse_directory_result_stops_at_max_items() -> None:
    junk = [{"uri": f"file:///etc/{i}"} for i in range(50)]
    good = [{"uri": "skill://a/t/x.md"}]
    children, dropped, _ = parse_directory_result(
        {"resources": junk + good}, directory_uri="skill://a/t", max_items=10
    )
    assert (children, len(dropped)) == ((), 10)
    children, dropped, _ = parse_directory_result(
        {"resources": good + junk}, directory_uri="skill://a/t", max_items=10
    )
    assert (len(children), len(dropped)) == (1, 9)
