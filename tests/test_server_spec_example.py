"""The spec's "Example Message Flow" and error examples, reproduced against our server.

The spec's files (``skills_core.spec_examples``, byte for byte) are served from memory and from a
real folder; every response is compared with the spec's JSON. Where the spec lists a manifest or a
directory in an order of its own, the comparison is order-insensitive (an entry's ``resources`` is
a set: SIL-19), and our order is checked separately (SKILL.md first, then by path; children by
name).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from server_helpers import KEY, Client, Generated, answer, request, spec_files

from skills_core import SkillEntry
from skills_core import spec_examples as ex
from skills_core.server import MemorySource, SkillsServer, server_from_roots

CACHE = {"ttlMs": 300000, "cacheScope": "public"}


def _memory(tmp_path: Path) -> tuple[SkillsServer, Callable[[], None]]:
    source = MemorySource(spec_files())

    def add() -> None:
        source.write("pdf-processing/templates/credit-note.md", ex.CREDIT_NOTE)

    return SkillsServer(source, cursor_key=KEY), add


def _disk(tmp_path: Path) -> tuple[SkillsServer, Callable[[], None]]:
    for path, data in spec_files().items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    note = tmp_path / "pdf-processing/templates/credit-note.md"

    def add() -> None:
        note.write_bytes(ex.CREDIT_NOTE)

    return server_from_roots([tmp_path], cursor_key=KEY), add


BACKENDS = {"memory": _memory, "disk": _disk}


@pytest.fixture(params=sorted(BACKENDS))
def flow(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[SkillsServer, Callable[[], None]]:
    return BACKENDS[request.param](tmp_path)


def body(result: dict[str, Any]) -> dict[str, Any]:
    """The result without ``_meta`` (the spec's examples leave it out)."""
    return {k: v for k, v in result.items() if k != "_meta"}


def test_example_message_flow(flow: tuple[SkillsServer, Callable[[], None]]) -> None:
    server, add_credit_note = flow
    connection = server.connection()

    # id 2: the host lists.
    response = answer(connection, request("skills/list", {}, request_id=2))
    assert response is not None
    assert response["id"] == 2
    assert body(response["result"]) == {
        "resultType": "complete",
        "skills": [ex.entry_json()],
        **CACHE,
    }

    # id 3: the host reads SKILL.md.
    response = answer(connection, request("resources/read", {"uri": ex.SKILL_MD_URI}, request_id=3))
    assert response is not None
    assert body(response["result"]) == {
        "resultType": "complete",
        "contents": [
            {
                "uri": "skill://pdf-processing/SKILL.md",
                "mimeType": "text/markdown",
                "text": "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF "
                "documents\n---\n\n# PDF processing\n\nChoose the matching template from "
                "`templates/`.\n",
            }
        ],
        **CACHE,
    }

    # The server adds credit-note.md; id 4: the model lists templates/ and sees it.
    add_credit_note()
    response = answer(
        connection,
        request(
            "resources/directory/read", {"uri": "skill://pdf-processing/templates"}, request_id=4
        ),
    )
    assert response is not None
    result = body(response["result"])
    expected_children = [
        {
            "uri": "skill://pdf-processing/templates/invoice.md",
            "name": "invoice.md",
            "mimeType": "text/markdown",
        },
        {
            "uri": "skill://pdf-processing/templates/purchase-order.md",
            "name": "purchase-order.md",
            "mimeType": "text/markdown",
        },
        {
            "uri": "skill://pdf-processing/templates/credit-note.md",
            "name": "credit-note.md",
            "mimeType": "text/markdown",
        },
    ]
    assert result["resultType"] == "complete"
    assert sorted(result["resources"], key=lambda r: r["name"]) == sorted(
        expected_children, key=lambda r: r["name"]
    )
    assert [r["name"] for r in result["resources"]] == [
        "credit-note.md",
        "invoice.md",
        "purchase-order.md",
    ]

    # The listing still shows the old entry until a refresh or a skills/get.
    response = answer(connection, request("skills/list", {}, request_id=5))
    assert response is not None
    assert response["result"]["skills"] == [ex.entry_json()]

    # id 6: the host refreshes the entry with skills/get.
    response = answer(connection, request("skills/get", {"uri": ex.SKILL_MD_URI}, request_id=6))
    assert response is not None
    result = body(response["result"])
    assert set(result) == {"resultType", "skill", "ttlMs", "cacheScope"}
    assert result["resultType"] == "complete"
    assert {k: result[k] for k in CACHE} == CACHE
    expected = ex.entry_json(with_credit_note=True)
    got = SkillEntry.from_json(result["skill"])
    assert got.resource_set == SkillEntry.from_json(expected).resource_set
    assert result["skill"]["frontmatter"] == expected["frontmatter"]
    assert result["skill"]["resources"][0]["uri"] == ex.SKILL_MD_URI


def test_credit_note_changes_the_entry_after_refresh(
    flow: tuple[SkillsServer, Callable[[], None]],
) -> None:
    server, add_credit_note = flow
    before = server.catalog.skills[0].entry
    assert before == SkillEntry.from_json(ex.entry_json())
    add_credit_note()
    assert server.catalog.skills[0].entry == before  # nothing re-scanned yet
    after = server.refresh().skills[0].entry
    assert (
        after.resource_set
        == SkillEntry.from_json(ex.entry_json(with_credit_note=True)).resource_set
    )
    assert after.resource_set != before.resource_set
    for path, (size, digest) in ex.EXPECTED.items():
        resource = after.resource(f"skill://pdf-processing/{path}")
        assert resource is not None
        assert (resource.size, resource.digest) == (size, digest)
    assert Client(server).call("skills/list")["skills"][0] == after.to_json()


def test_skills_get_example(flow: tuple[SkillsServer, Callable[[], None]]) -> None:
    server, _ = flow
    result = Client(server).call("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})
    assert body(result) == {"resultType": "complete", "skill": ex.entry_json(), **CACHE}


def test_error_examples(flow: tuple[SkillsServer, Callable[[], None]]) -> None:
    server, _ = flow
    connection = server.connection()
    unknown = answer(
        connection,
        request("skills/get", {"uri": "skill://acme/billing/chargebacks/SKILL.md"}, request_id=5),
    )
    assert unknown is not None
    assert unknown["id"] == 5
    assert unknown["error"]["code"] == -32602
    assert (
        unknown["error"]["message"]
        == "No skill is served at skill://acme/billing/chargebacks/SKILL.md"
    )
    not_dir = answer(
        connection,
        request(
            "resources/directory/read", {"uri": "skill://pdf-processing/SKILL.md"}, request_id=7
        ),
    )
    assert not_dir is not None
    assert not_dir["id"] == 7
    assert not_dir["error"]["code"] == -32602
    assert (
        not_dir["error"]["message"] == "skill://pdf-processing/SKILL.md is not a directory resource"
    )


def test_listing_example_with_nested_prefix_and_dynamic_skill() -> None:
    """The spec's ``skills/list`` example: a prefixed skill with a license, and a dynamic one."""

    refunds_md = (
        b"---\nname: refunds\n"
        b"description: Process customer refund requests per company policy\n"
        b"license: Apache-2.0\n---\n"
    )
    daily = Generated(
        "skill://reports/daily/SKILL.md",
        {
            "SKILL.md": b"---\nname: daily\n"
            b"description: Assemble today's operational report from live data\n---\n"
        },
    )
    source = MemorySource(
        {
            "git-workflow/SKILL.md": b"---\nname: git-workflow\n"
            b"description: Follow this team's Git conventions for branching and commits\n---\n",
            "acme/billing/refunds/SKILL.md": refunds_md,
            "acme/billing/refunds/examples/email.md": b"Dear customer,\n",
        },
        dynamic=[daily],
    )
    skills = Client(SkillsServer(source, cursor_key=KEY)).call("skills/list")["skills"]
    by_uri = {s["uri"]: s for s in skills}
    assert set(by_uri) == {
        "skill://git-workflow/SKILL.md",
        "skill://acme/billing/refunds/SKILL.md",
        "skill://reports/daily/SKILL.md",
    }
    assert by_uri["skill://acme/billing/refunds/SKILL.md"]["frontmatter"] == {
        "name": "refunds",
        "description": "Process customer refund requests per company policy",
        "license": "Apache-2.0",
    }
    assert [r["uri"] for r in by_uri["skill://acme/billing/refunds/SKILL.md"]["resources"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/examples/email.md",
    ]
    assert by_uri["skill://reports/daily/SKILL.md"]["resources"] == "dynamic"
    assert by_uri["skill://reports/daily/SKILL.md"]["frontmatter"]["name"] == "daily"
