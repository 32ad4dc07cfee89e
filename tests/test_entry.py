"""Skill entries: ENTRY-*, SIL-03, SIL-04, SIL-05, SIL-12, SIL-13, SIL-18, SIL-20, VER-18, WG-06."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from skills_core import (
    DEFAULT_LIMITS,
    EMPTY_DIGEST,
    EntryOverLimitError,
    InvalidEntryError,
    Limits,
    SkillEntry,
    SkillResource,
    compute_digest,
)
from skills_core import spec_examples as ex

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64

# The spec's skills/list example (docs/requirements.md#spec-test-vectors): entry-validation vectors only.
SPEC_LISTING: list[dict[str, Any]] = [
    {
        "uri": "skill://git-workflow/SKILL.md",
        "frontmatter": {
            "name": "git-workflow",
            "description": "Follow this team's Git conventions for branching and commits",
        },
        "resources": [
            {
                "uri": "skill://git-workflow/SKILL.md",
                "digest": "sha256:b95a384300adeea2d902f7d19cd7c04b378ef58e09759107b9c7db4dcacbaa25",
                "size": 190,
            }
        ],
    },
    {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {
            "name": "refunds",
            "description": "Process customer refund requests per company policy",
            "license": "Apache-2.0",
        },
        "resources": [
            {
                "uri": "skill://acme/billing/refunds/SKILL.md",
                "digest": "sha256:ae7bc7e45f44a6381977ef1f772cbad6e38d8ec78903ea7b87abb373815a8f89",
                "size": 175,
            },
            {
                "uri": "skill://acme/billing/refunds/examples/email.md",
                "digest": "sha256:a724fa5ed3b9e39c0e731fe1f0e866eb46d23969af25ecf0d5f41982e3e36bea",
                "size": 58,
            },
        ],
    },
    {
        "uri": "skill://reports/daily/SKILL.md",
        "frontmatter": {
            "name": "daily",
            "description": "Assemble today's operational report from live data",
        },
        "resources": "dynamic",
    },
]


def entry(**changes: Any) -> dict[str, Any]:
    """The spec's pdf-processing entry P, with top-level changes."""
    base = ex.entry_json()
    base.update(changes)
    return base


def problems_of(obj: object, limits: Limits | None = DEFAULT_LIMITS) -> list[str]:
    with pytest.raises(InvalidEntryError) as info:
        SkillEntry.from_json(obj, limits=limits)
    return [p.code for p in info.value.problems]


# --- valid entries ---------------------------------------------------------------------------


@pytest.mark.parametrize("obj", SPEC_LISTING, ids=lambda o: o["uri"])
# Requirement rows: ENTRY-01
def test_spec_listing_entries_are_valid_ENTRY_01(obj: dict[str, Any]) -> None:
    parsed = SkillEntry.from_json(obj)
    assert parsed.to_json() == obj
    assert parsed.name == obj["frontmatter"]["name"]
    assert parsed.uri == obj["uri"]


# Requirement rows: ENTRY-01, GET-06
def test_spec_pdf_processing_entry_list_and_get_are_equal_ENTRY_01_GET_06() -> None:
    listed = SkillEntry.from_json(ex.entry_json())
    got = SkillEntry.from_json(ex.entry_json())
    assert listed == got
    assert hash(listed) == hash(got)
    assert listed.name == "pdf-processing"
    assert listed.description == "Extract, fill, and assemble PDF documents"
    assert listed.root == "skill://pdf-processing"
    assert not listed.is_dynamic
    assert listed.total_size == 215  # docs/requirements.md#spec-test-vectors: 151 + 29 + 35
    changed = SkillEntry.from_json(ex.entry_json(with_credit_note=True))
    assert changed.total_size == 254
    assert changed != listed
    assert changed.resource_set - listed.resource_set == {
        (
            "skill://pdf-processing/templates/credit-note.md",
            "sha256:766bffa8d4908ce897e1727ca22e4bf0fa796620b35218ce2132a124545626f1",
            39,
        )
    }


def test_entries_are_built_from_the_spec_files_themselves() -> None:
    for path, data in ex.FILES_WITH_CREDIT_NOTE.items():
        assert ex.EXPECTED[path] == (len(data), compute_digest(data))


# Requirement rows: ENTRY-06, ENTRY-15
def test_dynamic_entry_ENTRY_06_ENTRY_15() -> None:
    daily = SkillEntry.from_json(SPEC_LISTING[2])
    assert daily.is_dynamic
    assert daily.resources == "dynamic"
    assert daily.resource("skill://reports/daily/SKILL.md") is None
    assert daily.total_size == 0
    daily.check_limits()
    with pytest.raises(ValueError, match="dynamic"):
        _ = daily.resource_set


def test_resource_lookup_is_exact() -> None:
    parsed = SkillEntry.from_json(ex.entry_json())
    found = parsed.resource("skill://pdf-processing/templates/invoice.md")
    assert found is not None
    assert found.size == 29
    assert found.key == ("skill://pdf-processing/templates/invoice.md", found.digest, 29)
    assert parsed.resource("skill://pdf-processing/templates/INVOICE.md") is None
    assert parsed.resource("skill://pdf-processing/templates/invoice.md#x") is None


# Requirement rows: VER-18
def test_unknown_fields_are_kept_for_round_trip_but_ignored_VER_18() -> None:
    obj = entry(
        archives=[{"uri": "skill://pdf-processing.zip"}], _meta={"com.gateway/verified": True}
    )
    obj["resources"][1]["mimeType"] = "text/markdown"
    parsed = SkillEntry.from_json(obj)
    assert parsed.to_json() == obj
    assert set(parsed.resource_set) == set(SkillEntry.from_json(ex.entry_json()).resource_set)
    assert parsed.extra["archives"] == ({"uri": "skill://pdf-processing.zip"},)


# Requirement rows: ENTRY-03
def test_frontmatter_passes_through_verbatim_and_frozen_ENTRY_03() -> None:
    fm = {
        "name": "pdf-processing",
        "description": "d",
        "license": "Apache-2.0",
        "metadata": {"author": "x", "io.modelcontextprotocol/x": "1"},
        "x-custom": [1, 2.5, None, True, {"deep": ["a"]}],
        "allowed-tools": "Bash Write",
    }
    obj = entry(frontmatter=fm)
    parsed = SkillEntry.from_json(obj)
    assert parsed.to_json()["frontmatter"] == fm
    with pytest.raises(TypeError):
        parsed.frontmatter["name"] = "other"  # type: ignore[index]
    fm["license"] = "MIT"  # mutating the input does not reach the entry
    assert parsed.frontmatter["license"] == "Apache-2.0"


def test_to_json_returns_fresh_mutable_copies() -> None:
    parsed = SkillEntry.from_json(ex.entry_json())
    first: dict[str, Any] = parsed.to_json()
    first["frontmatter"]["name"] = "changed"
    assert parsed.to_json() == ex.entry_json()


def test_equality_is_on_exact_json_not_python_equality() -> None:
    a = SkillEntry.from_json(
        entry(frontmatter={"name": "pdf-processing", "description": "d", "x": True})
    )
    b = SkillEntry.from_json(
        entry(frontmatter={"name": "pdf-processing", "description": "d", "x": 1})
    )
    assert a != b
    reordered = entry()
    reordered["resources"] = list(reversed(reordered["resources"]))
    r = SkillEntry.from_json(reordered)
    p = SkillEntry.from_json(ex.entry_json())
    assert r != p  # different wire content ...
    assert r.resource_set == p.resource_set  # ... same manifest as a set (SIL-19)
    assert p != "not an entry"


def test_constructor_validates_and_freezes() -> None:
    resources = [SkillResource(uri=ex.SKILL_MD_URI, digest=ex.EXPECTED["SKILL.md"][1], size=151)]
    built = SkillEntry(
        uri=ex.SKILL_MD_URI,
        frontmatter={"name": "pdf-processing", "description": "d"},
        resources=resources,
    )
    assert isinstance(built.resources, tuple)
    assert built.to_json()["resources"] == [resources[0].to_json()]
    assert SkillEntry.from_json(built.to_json()) == built
    with pytest.raises(InvalidEntryError) as info:
        SkillEntry(
            uri="skill://pdf-processing/SKILL.md",
            frontmatter={"name": "other", "description": "d"},
            resources=resources,
        )
    assert [p.code for p in info.value.problems] == ["name-mismatch"]
    with pytest.raises(InvalidEntryError):
        SkillEntry(
            uri=ex.SKILL_MD_URI,
            frontmatter={"name": "pdf-processing", "description": "d"},
            resources=["not a resource"],  # type: ignore[list-item]
        )
    with pytest.raises(InvalidEntryError):
        SkillEntry(
            uri=ex.SKILL_MD_URI,
            frontmatter={"name": "pdf-processing", "description": "d"},
            resources="dynamic",
            extra={"x": float("nan")},
        )
    dyn = SkillEntry(
        uri=ex.SKILL_MD_URI,
        frontmatter={"name": "pdf-processing", "description": "d"},
        resources="dynamic",
        extra={"k": [1]},
    )
    assert dyn.to_json()["k"] == [1]


def test_skill_resource_constructor_validates() -> None:
    with pytest.raises(InvalidEntryError) as info:
        SkillResource(uri=5, digest="x", size=-1)  # type: ignore[arg-type]
    assert {p.code for p in info.value.problems} == {"bad-resource-uri", "bad-digest", "bad-size"}
    with pytest.raises(InvalidEntryError):
        SkillResource(uri="skill://a/x", digest=EMPTY_DIGEST, size=0, extra={"k": {1, 2}})
    res = SkillResource(uri="skill://a/x", digest=EMPTY_DIGEST, size=0, extra={"k": [1]})
    assert res.to_json() == {"uri": "skill://a/x", "digest": EMPTY_DIGEST, "size": 0, "k": [1]}


# Requirement rows: SIL-09
def test_from_json_text_rejects_duplicate_keys_nan_and_bad_json_SIL_09() -> None:
    good = json.dumps(ex.entry_json())
    assert SkillEntry.from_json_text(good) == SkillEntry.from_json(ex.entry_json())
    assert SkillEntry.from_json_text(good.encode()) == SkillEntry.from_json(ex.entry_json())
    dup = good.replace('"frontmatter": {', '"frontmatter": {"name": "x", ', 1)
    assert problems_of_text(dup) == ["bad-json"]
    assert problems_of_text('{"size": NaN}') == ["bad-json"]
    assert problems_of_text("{") == ["bad-json"]
    assert problems_of_text("[" * 100_000) == ["bad-json"]


def problems_of_text(text: str) -> list[str]:
    with pytest.raises(InvalidEntryError) as info:
        SkillEntry.from_json_text(text)
    return [p.code for p in info.value.problems]


# --- invalid entries -------------------------------------------------------------------------


@pytest.mark.parametrize("obj", [None, [], "x", 1, True])
def test_entry_must_be_an_object(obj: object) -> None:
    assert problems_of(obj) == ["not-an-object"]


@pytest.mark.parametrize(
    ("uri", "code"),
    [
        ("skill://a", "bad-uri"),  # ENTRY-02
        ("skill://pdf-processing/README.md", "bad-uri"),
        ("skill://pdf-processing/SKILL.md?x=1", "bad-uri"),  # SIL-03
        ("skill://pdf-processing/SKILL.md#f", "bad-uri"),
        ("skill://pdf-processing/skill.md", "bad-uri"),  # SIL-05
        ("github://owner/repo/skills/refunds", "bad-uri"),  # URI-14
        (5, "bad-uri"),
    ],
)
# Requirement rows: ENTRY-02, URI-14
def test_entry_uri_must_be_a_skill_md_uri_ENTRY_02_URI_14(uri: object, code: str) -> None:
    assert code in problems_of(entry(uri=uri))


def test_missing_uri() -> None:
    obj = entry()
    del obj["uri"]
    assert problems_of(obj) == ["missing-uri"]


# Requirement rows: URI-13, URI-14
def test_other_scheme_is_handled_like_skill_URI_13_URI_14() -> None:
    github = {
        "uri": "github://owner/repo/skills/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "d"},
        "resources": [
            {"uri": "github://owner/repo/skills/refunds/SKILL.md", "digest": D1, "size": 1}
        ],
    }
    assert SkillEntry.from_json(github).name == "refunds"
    github["frontmatter"] = {"name": "x", "description": "d"}
    assert problems_of(github) == ["name-mismatch"]


# Requirement rows: ENTRY-05, URI-06
def test_name_mismatch_ENTRY_05_URI_06() -> None:
    obj = {
        "uri": "skill://a/b/SKILL.md",
        "frontmatter": {"name": "c", "description": "d"},
        "resources": [{"uri": "skill://a/b/SKILL.md", "digest": D1, "size": 1}],
    }
    assert problems_of(obj) == ["name-mismatch"]
    # the old skill-uri-scheme.md example is non-conformant now
    obj = {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refund-handling", "description": "d"},
        "resources": [{"uri": "skill://acme/billing/refunds/SKILL.md", "digest": D1, "size": 1}],
    }
    assert problems_of(obj) == ["name-mismatch"]


@pytest.mark.parametrize(
    ("frontmatter", "codes"),
    [
        ({"name": "pdf-processing"}, ["description-missing"]),
        ({"description": "d"}, ["name-missing"]),
        ({"name": 5, "description": "d"}, ["name-not-string"]),
        ({"name": "pdf-processing", "description": None}, ["description-not-string"]),
        (["name", "description"], ["bad-frontmatter"]),
        ("name: x", ["bad-frontmatter"]),
        ({"name": "pdf-processing", "description": "d", "x": float("inf")}, ["not-json"]),
        ({"name": "pdf-processing", "description": "d", "x": (1, 2)}, []),
        ({"name": "pdf-processing", "description": "d", 3: "x"}, ["not-json"]),
        ({"name": "pdf-processing", "description": "d", "x": {1, 2}}, ["not-json"]),
        ({"name": "pdf-processing", "description": "\ud800"}, ["not-json"]),
        ({"name": "pdf-processing", "description": "d", "\udc00": "x"}, ["not-json"]),
    ],
)
# Requirement rows: ENTRY-03
def test_frontmatter_rules_ENTRY_03(frontmatter: object, codes: list[str]) -> None:
    obj = entry(frontmatter=frontmatter)
    if not codes:
        SkillEntry.from_json(obj)  # tuples are accepted as JSON arrays from Python callers
        return
    assert problems_of(obj) == codes


def test_missing_frontmatter() -> None:
    obj = entry()
    del obj["frontmatter"]
    assert problems_of(obj) == ["missing-frontmatter"]


def test_invalid_name_without_valid_uri_is_reported() -> None:
    obj = entry(uri="skill://x", frontmatter={"name": "Bad_Name", "description": "d"})
    assert problems_of(obj) == ["bad-uri", "name-invalid"]


def test_deeply_nested_frontmatter_is_a_problem_not_a_crash() -> None:
    deep: Any = "leaf"
    for _ in range(10_000):
        deep = [deep]
    obj = entry(frontmatter={"name": "pdf-processing", "description": "d", "x": deep})
    assert problems_of(obj) == ["not-json"]


@pytest.mark.parametrize("resources", [None, {}, "DYNAMIC", "", 0, "Dynamic", " dynamic", True])
# Requirement rows: ENTRY-06, ENTRY-07
def test_bad_resources_value_ENTRY_06_ENTRY_07(resources: object) -> None:
    assert problems_of(entry(resources=resources)) == ["bad-resources"]


# Requirement rows: ENTRY-06
def test_missing_resources_ENTRY_06_and_legacy_draft_without_resources() -> None:
    obj = entry()
    del obj["resources"]
    assert problems_of(obj) == ["missing-resources"]


def test_legacy_draft_entry_without_size_is_invalid() -> None:
    obj = entry()
    for item in obj["resources"]:
        del item["size"]
    assert problems_of(obj) == ["missing-size"] * 3


# Requirement rows: ENTRY-09
def test_empty_manifest_and_missing_self_entry_ENTRY_09() -> None:
    assert problems_of(entry(resources=[])) == ["missing-skill-md"]
    obj = entry()
    obj["resources"] = obj["resources"][1:]
    assert problems_of(obj) == ["missing-skill-md"]


# Requirement rows: SIL-04, ENTRY-08
def test_duplicate_uri_SIL_04_ENTRY_08() -> None:
    obj = entry()
    obj["resources"].append(
        {"uri": "skill://pdf-processing/templates/invoice.md", "digest": D2, "size": 3}
    )
    assert problems_of(obj) == ["duplicate-uri"]


@pytest.mark.parametrize(
    "uri",
    [
        "skill://acme/billing/other/x.md",
        "skill://pdf-processing",
        "skill://pdf-processingX/a.md",
        "github://pdf-processing/a.md",
        "skill://PDF-processing/a.md",
        "file:///etc/passwd",
        "file:/etc/passwd",
    ],
)
# Requirement rows: ENTRY-10
def test_resource_outside_the_skill_ENTRY_10(uri: str) -> None:
    obj = entry()
    obj["resources"].append({"uri": uri, "digest": D1, "size": 1})
    assert problems_of(obj) == ["outside-skill"]


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/../x",
        "skill://pdf-processing/%2e%2e/x",
        "skill://pdf-processing/a//b",
        "skill://pdf-processing/templates/",
        "skill://pdf-processing/a.md?x=1",
        "skill://pdf-processing/a.md#x",
        "skill://pdf-processing/a\u202e.md",
    ],
)
# Requirement rows: SIL-01, SIL-03, SIL-08
def test_malformed_resource_uri_inside_the_skill_SIL_01_SIL_03_SIL_08(uri: str) -> None:
    obj = entry()
    obj["resources"].append({"uri": uri, "digest": D1, "size": 1})
    assert problems_of(obj) == ["bad-resource-uri"]


@pytest.mark.parametrize(
    ("size", "code"),
    [
        (-1, "bad-size"),
        (1.5, "bad-size"),
        ("29", "bad-size"),
        (1e3, "bad-size"),
        (29.0, "bad-size"),
        (True, "bad-size"),
        (None, "bad-size"),
        (2**53, "bad-size"),
    ],
)
# Requirement rows: ENTRY-11
def test_size_rules_ENTRY_11(size: object, code: str) -> None:
    obj = entry()
    obj["resources"][1]["size"] = size
    assert problems_of(obj) == [code]


def test_size_at_the_safe_integer_limit_is_well_formed_but_over_the_byte_limit() -> None:
    obj = entry()
    obj["resources"][1]["size"] = 2**53 - 1
    with pytest.raises(EntryOverLimitError) as info:
        SkillEntry.from_json(obj)
    assert [p.code for p in info.value.problems] == ["too-large"]
    assert SkillEntry.from_json(obj, limits=None).total_size == 2**53 - 1 + 151 + 35


# Requirement rows: SIL-18
def test_size_zero_requires_the_empty_digest_SIL_18() -> None:
    obj = entry()
    obj["resources"].append(
        {"uri": "skill://pdf-processing/empty", "digest": EMPTY_DIGEST, "size": 0}
    )
    assert SkillEntry.from_json(obj).resource("skill://pdf-processing/empty") is not None
    obj["resources"][-1]["digest"] = D1
    assert problems_of(obj) == ["size-digest-conflict"]
    obj["resources"][-1].update(digest=EMPTY_DIGEST, size=3)
    assert problems_of(obj) == ["size-digest-conflict"]


# Requirement rows: SIL-18
def test_same_digest_with_two_sizes_SIL_18() -> None:
    obj = entry()
    obj["resources"].append({"uri": "skill://pdf-processing/a", "digest": D1, "size": 1})
    obj["resources"].append({"uri": "skill://pdf-processing/b", "digest": D1, "size": 2})
    assert problems_of(obj) == ["size-digest-conflict"]


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:99B737495721155ECE826D57521E2D66141EBDC1344A400487481EA2642AB19E",
        "SHA256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19",
        "sha512:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        5,
        None,
    ],
)
# Requirement rows: ENTRY-12
def test_digest_rules_ENTRY_12(digest: object) -> None:
    obj = entry()
    obj["resources"][0]["digest"] = digest
    assert problems_of(obj) == ["bad-digest"]


def test_resource_items_must_be_objects_with_all_fields() -> None:
    obj = entry()
    obj["resources"].append("skill://pdf-processing/x")
    obj["resources"].append({})
    obj["resources"].append({"uri": 5, "digest": D1, "size": 1})
    assert problems_of(obj) == [
        "bad-resource",
        "missing-uri",
        "missing-digest",
        "missing-size",
        "bad-resource-uri",
    ]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("SKILL.md", "Skill.md"),  # SIL-05, WG-06
        ("templates/Invoice.md", "templates/invoice.md"),
        ("caf%C3%A9.md", "cafe%CC%81.md"),  # NFC vs NFD
        ("café.md", "cafe\u0301.md"),
        ("caf%c3%a9.md", "caf%C3%A9.md"),  # the same bytes spelt twice
        ("STRASSE.md", "straße.md"),  # case folding, not just lowercasing
        ("a.md", "a.md/b.md"),  # both a file and a folder
        ("A", "a/b"),
    ],
)
# Requirement rows: WG-06
def test_path_collisions_are_invalid_WG_06(a: str, b: str) -> None:
    obj = entry()
    obj["resources"].append({"uri": f"skill://pdf-processing/{a}", "digest": D1, "size": 1})
    obj["resources"].append({"uri": f"skill://pdf-processing/{b}", "digest": D2, "size": 1})
    assert "path-collision" in problems_of(obj)


# Requirement rows: SIL-12
def test_every_problem_is_reported_not_just_the_first_SIL_12() -> None:
    obj = {
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {"name": "other", "description": 7},
        "resources": [
            {"uri": "skill://elsewhere/x", "digest": "bad", "size": -1},
            {"uri": "skill://elsewhere/x", "digest": D1, "size": 1},
        ],
    }
    with pytest.raises(InvalidEntryError) as info:
        SkillEntry.from_json(obj)
    err = info.value
    assert [(p.code, p.pointer) for p in err.problems] == [
        ("description-not-string", "/frontmatter/description"),
        ("name-mismatch", "/frontmatter/name"),
        ("bad-digest", "/resources/0/digest"),
        ("bad-size", "/resources/0/size"),
        ("outside-skill", "/resources/0/uri"),
        ("duplicate-uri", "/resources/1/uri"),
        ("missing-skill-md", "/resources"),
    ]
    assert err.uri == "skill://pdf-processing/SKILL.md"
    assert err.kind == "invalid-entry"
    assert err.malformed
    assert not err.over_limit
    assert "7 problems" in str(err)
    assert "/resources/0/digest" in str(err)


# --- limits (ENTRY-17 .. ENTRY-23, SIL-20) ---------------------------------------------------


def big_entry(count: int, total: int) -> dict[str, Any]:
    """An entry with ``count`` resources whose sizes sum to ``total`` (SKILL.md first)."""
    base, rest = divmod(total, count)
    resources = []
    for index in range(count):
        size = base + (1 if index < rest else 0)
        uri = "skill://big/SKILL.md" if index == 0 else f"skill://big/f{index:04}.bin"
        digest = f"sha256:{index:064x}"
        resources.append({"uri": uri, "digest": digest, "size": size})
    return {
        "uri": "skill://big/SKILL.md",
        "frontmatter": {"name": "big", "description": "d"},
        "resources": resources,
    }


# Requirement rows: ENTRY-17
def test_exactly_at_both_limits_is_accepted_ENTRY_17() -> None:
    parsed = SkillEntry.from_json(big_entry(512, 16 * 1024 * 1024))
    assert len(parsed.resources) == 512
    assert parsed.total_size == 16_777_216
    parsed.check_limits()


# Requirement rows: ENTRY-20, ENTRY-21
def test_513_resources_is_over_limit_with_both_numbers_ENTRY_20_ENTRY_21() -> None:
    with pytest.raises(EntryOverLimitError) as info:
        SkillEntry.from_json(big_entry(513, 1000))
    err = info.value
    assert err.kind == "over-limit"
    assert err.over_limit
    assert not err.malformed
    assert [p.code for p in err.problems] == ["too-many-resources"]
    assert "513" in str(err)
    assert "512" in str(err)


# Requirement rows: ENTRY-20
def test_one_byte_over_is_over_limit_ENTRY_20() -> None:
    with pytest.raises(EntryOverLimitError) as info:
        SkillEntry.from_json(big_entry(3, 16 * 1024 * 1024 + 1))
    assert [p.code for p in info.value.problems] == ["too-large"]
    assert "16777217" in str(info.value)
    assert "16777216" in str(info.value)


def test_both_limits_at_once() -> None:
    with pytest.raises(EntryOverLimitError) as info:
        SkillEntry.from_json(big_entry(600, 20 * 1024 * 1024))
    assert [p.code for p in info.value.problems] == ["too-many-resources", "too-large"]


# Requirement rows: ENTRY-20
def test_sum_past_2_53_is_still_rejected_ENTRY_20() -> None:
    obj = big_entry(4, 4)
    for item in obj["resources"]:
        item["size"] = 2**53 - 1
    with pytest.raises(EntryOverLimitError) as info:
        SkillEntry.from_json(obj)
    assert str(4 * (2**53 - 1)) in str(info.value)


def test_malformed_and_over_limit_is_malformed() -> None:
    obj = big_entry(513, 1000)
    obj["frontmatter"]["name"] = "x"
    with pytest.raises(InvalidEntryError) as info:
        SkillEntry.from_json(obj)
    assert type(info.value) is InvalidEntryError
    assert info.value.over_limit
    assert info.value.malformed


# Requirement rows: ENTRY-18
def test_larger_limits_are_allowed_ENTRY_18() -> None:
    parsed = SkillEntry.from_json(big_entry(513, 1000), limits=Limits(max_resources=1024))
    assert len(parsed.resources) == 513
    with pytest.raises(EntryOverLimitError):
        parsed.check_limits()
    parsed.check_limits(Limits(max_resources=513))
    assert SkillEntry.from_json(big_entry(513, 1000), limits=None).total_size == 1000


@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_limits_must_be_positive_ints(value: object) -> None:
    with pytest.raises(ValueError, match="positive int"):
        Limits(max_resources=value)  # type: ignore[arg-type]


# Requirement rows: ENTRY-23
def test_listing_size_is_not_limited_ENTRY_23() -> None:
    entries = [
        SkillEntry.from_json(
            {
                "uri": f"skill://s{i}/SKILL.md",
                "frontmatter": {"name": f"s{i}", "description": "d"},
                "resources": [{"uri": f"skill://s{i}/SKILL.md", "digest": D1, "size": 1}],
            }
        )
        for i in range(2000)
    ]
    assert len({e.uri for e in entries}) == 2000


# Requirement rows: ENTRY-13
def test_nested_skill_files_may_appear_in_both_entries_ENTRY_13() -> None:
    outer: dict[str, Any] = {
        "uri": "skill://a/SKILL.md",
        "frontmatter": {"name": "a", "description": "d"},
        "resources": [
            {"uri": "skill://a/SKILL.md", "digest": D1, "size": 1},
            {"uri": "skill://a/sub/SKILL.md", "digest": D2, "size": 2},
            {"uri": "skill://a/sub/x.md", "digest": "sha256:" + "3" * 64, "size": 3},
        ],
    }
    inner: dict[str, Any] = {
        "uri": "skill://a/sub/SKILL.md",
        "frontmatter": {"name": "sub", "description": "d"},
        "resources": copy.deepcopy(outer["resources"][1:]),
    }
    a = SkillEntry.from_json(outer)
    b = SkillEntry.from_json(inner)
    assert a.resource_set & b.resource_set == b.resource_set
    # ENTRY-14: a change to a nested file changes both sets
    outer["resources"][2]["digest"] = inner["resources"][1]["digest"] = "sha256:" + "4" * 64
    assert SkillEntry.from_json(outer).resource_set != a.resource_set
    assert SkillEntry.from_json(inner).resource_set != b.resource_set


def test_errors_pickle_round_trip() -> None:
    import pickle

    with pytest.raises(InvalidEntryError) as info:
        SkillEntry.from_json(entry(resources=None))
    clone = pickle.loads(pickle.dumps(info.value))
    assert type(clone) is InvalidEntryError
    assert clone.problems == info.value.problems
    assert str(clone) == str(info.value)


def test_resource_item_of_a_non_json_type_is_named() -> None:
    obj = entry()
    obj["resources"].append({1, 2})
    with pytest.raises(InvalidEntryError, match="not set"):
        SkillEntry.from_json(obj)


def test_constructor_deep_freezes_read_only_inputs() -> None:
    from types import MappingProxyType

    fm = MappingProxyType({"name": "pdf-processing", "description": "d", "x": [1, [2]]})
    built = SkillEntry(uri=ex.SKILL_MD_URI, frontmatter=fm, resources="dynamic")
    assert built.frontmatter["x"] == (1, (2,))
    assert built.to_json()["frontmatter"] == {
        "name": "pdf-processing",
        "description": "d",
        "x": [1, [2]],
    }


def test_json_type_names() -> None:
    from skills_core.jsonvalue import json_type_name

    values: tuple[object, ...] = (None, True, "s", 1, 1.5, [], (), {}, {1, 2})
    assert [json_type_name(v) for v in values] == [
        "null",
        "a boolean",
        "a string",
        "a number",
        "a number",
        "an array",
        "an array",
        "an object",
        "set",
    ]
