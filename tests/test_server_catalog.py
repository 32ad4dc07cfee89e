"""The server catalog (pure): which folders become skills, their entries, and why others do not.

Rows: FMT-01..FMT-04, URI-01, URI-06, URI-08..URI-10, URI-12, URI-13, ENTRY-04, ENTRY-08,
ENTRY-13, ENTRY-15, ENTRY-19, ENTRY-24, LIST-11, ORG-10, SIL-05, SIL-23, WG-06.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import pytest
from server_helpers import Generated, skill_md, spec_files

from skills_core import SkillEntry, URIError, compute_digest
from skills_core import spec_examples as ex
from skills_core.entry import Limits
from skills_core.frontmatter import parse_frontmatter
from skills_core.server import (
    Catalog,
    CatalogBuilder,
    DynamicSkill,
    MemorySource,
    OmitCode,
    OmittedSkill,
    ProblemCode,
    PublishedSkill,
    RootSnapshot,
    SnapshotFile,
    SourceProblem,
)
from skills_core.server.catalog import record_digest
from skills_core.server.model import check_relative_path
from skills_core.validation import Severity


def only(catalog: Catalog) -> PublishedSkill:
    assert len(catalog.skills) == 1, catalog
    return catalog.skills[0]


def omitted(catalog: Catalog, code: OmitCode) -> OmittedSkill:
    matches = [o for o in catalog.omitted if o.code is code]
    assert len(matches) == 1, catalog.omitted
    return matches[0]


def uris(catalog: Catalog) -> list[str]:
    return [skill.uri for skill in catalog.skills]


def manifest(skill: PublishedSkill) -> dict[str, tuple[str, int]]:
    assert not isinstance(skill.entry.resources, str)
    return {r.uri: (r.digest, r.size) for r in skill.entry.resources}


# --- the spec's example ------------------------------------------------------------------------


# Requirement rows: FMT-05
def test_spec_example_entry_is_reproduced_byte_for_byte_FMT_05() -> None:
    skill = only(Catalog.from_files(spec_files()))
    assert skill.entry.name == "pdf-processing"
    assert skill.entry == SkillEntry.from_json(ex.entry_json())
    assert skill.entry.to_json() == ex.entry_json()
    assert skill.root == 0
    assert skill.folder == "pdf-processing"
    assert dict(skill.files) == {
        "skill://pdf-processing/SKILL.md": "SKILL.md",
        "skill://pdf-processing/templates/invoice.md": "templates/invoice.md",
        "skill://pdf-processing/templates/purchase-order.md": "templates/purchase-order.md",
    }
    assert skill.uri == ex.SKILL_MD_URI
    assert skill.root_uri == "skill://pdf-processing"
    assert not skill.is_dynamic
    assert skill.listed


def test_skill_md_comes_first_then_files_by_path() -> None:
    files = {**spec_files(), "pdf-processing/A.md": b"a", "pdf-processing/z/y.md": b"y"}
    skill = only(Catalog.from_files(files))
    assert not isinstance(skill.entry.resources, str)
    assert [r.uri.rpartition("pdf-processing/")[2] for r in skill.entry.resources] == [
        "SKILL.md",
        "A.md",
        "templates/invoice.md",
        "templates/purchase-order.md",
        "z/y.md",
    ]


# --- skill format: FMT-01..FMT-04, ENTRY-04 ------------------------------------------------------


# Requirement rows: FMT-02
def test_folder_without_skill_md_is_not_a_skill_FMT_02() -> None:
    catalog = Catalog.from_files({"x/README.md": b"# x\n", "x/skill.md": skill_md("x")})
    assert catalog.skills == ()
    assert catalog.omitted == ()


# Requirement rows: SIL-05
def test_skill_md_is_case_sensitive_SIL_05() -> None:
    catalog = Catalog.from_files({"x/Skill.md": skill_md("x"), "y/SKILL.md": skill_md("y")})
    assert uris(catalog) == ["skill://y/SKILL.md"]


@pytest.mark.parametrize(
    "text",
    [b"# title\n", b"---\nname: x\ndescription: [unclosed\n---\n", b"\xff\xfe---\n"],
    ids=["no-frontmatter", "bad-yaml", "not-utf8"],
)
# Requirement rows: FMT-03
def test_skill_md_without_parsable_frontmatter_is_omitted_FMT_03(text: bytes) -> None:
    catalog = Catalog.from_files({"x/SKILL.md": text})
    assert catalog.skills == ()
    left_out = omitted(catalog, OmitCode.FRONTMATTER)
    assert left_out.path == "x"
    assert left_out.uri == "skill://x/SKILL.md"
    assert left_out.reason.startswith("SKILL.md frontmatter")


# Requirement rows: FMT-03
def test_frontmatter_lacking_description_is_omitted_FMT_03() -> None:
    catalog = Catalog.from_files({"x/SKILL.md": b"---\nname: x\n---\n"})
    assert "description" in omitted(catalog, OmitCode.INVALID).reason


@pytest.mark.parametrize(
    "extra",
    [
        "metadata:\n  a: {b: c}\n",  # metadata values must be strings
        "compatibility: ''\n",
        "allowed-tools: [Bash]\n",
        "license: 3\n",
    ],
)
# Requirement rows: FMT-01
def test_frontmatter_breaking_agent_skills_rules_is_omitted_FMT_01(extra: str) -> None:
    catalog = Catalog.from_files({"x/SKILL.md": skill_md("x", extra=extra)})
    assert catalog.skills == ()
    assert omitted(catalog, OmitCode.INVALID).uri == "skill://x/SKILL.md"


@pytest.mark.parametrize("name", ["PDF", "bad--name", "-x", "a_b"])
# Requirement rows: URI-07
def test_invalid_names_are_omitted_even_when_they_match_the_folder_URI_07(name: str) -> None:
    catalog = Catalog.from_files({f"{name}/SKILL.md": skill_md(name)})
    assert catalog.skills == ()
    assert len(catalog.omitted) == 1
    assert catalog.omitted[0].code in (OmitCode.INVALID, OmitCode.BAD_PATH)


# Requirement rows: URI-06
def test_name_must_equal_the_folder_name_URI_06() -> None:
    catalog = Catalog.from_files({"refunds/SKILL.md": skill_md("refund-handling")})
    left_out = omitted(catalog, OmitCode.NAME_MISMATCH)
    assert "'refund-handling'" in left_out.reason
    assert "'refunds'" in left_out.reason


# Requirement rows: FMT-04
def test_supporting_files_and_folders_are_listed_FMT_04() -> None:
    files = {
        "pdf-processing/SKILL.md": ex.SKILL_MD,
        "pdf-processing/templates/invoice.md": ex.INVOICE,
        "pdf-processing/scripts/extract.py": b"print(1)\n",
    }
    skill = only(Catalog.from_files(files))
    assert set(manifest(skill)) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/scripts/extract.py",
    }


# Requirement rows: ENTRY-04
def test_frontmatter_is_passed_through_verbatim_ENTRY_04() -> None:
    text = skill_md(
        "x",
        extra="license: Apache-2.0\nmetadata:\n  author: me\nx-custom: [1, 2.5, true, null]\n",
    )
    skill = only(Catalog.from_files({"x/SKILL.md": text}))
    parsed = parse_frontmatter(text).data
    assert skill.entry.to_json()["frontmatter"] == parsed
    assert parsed["x-custom"] == [1, 2.5, True, None]


# Requirement rows: FMT-12
def test_validation_warnings_are_kept_as_findings_FMT_12() -> None:
    text = skill_md("x", extra="metadata:\n  io.modelcontextprotocol/thing: '1'\n")
    catalog = Catalog.from_files({"x/SKILL.md": text})
    skill = only(catalog)
    assert [f.severity for f in skill.findings] == [Severity.WARNING]
    assert catalog.findings(skill) == skill.findings


# --- resource mapping: URI-01, URI-08..URI-10, URI-12, ENTRY-08, ENTRY-13, ENTRY-24 --------------


# Requirement rows: URI-01, URI-08
def test_uri_is_skill_scheme_and_folder_path_URI_01_URI_08() -> None:
    catalog = Catalog.from_files(
        {
            "git-workflow/SKILL.md": skill_md("git-workflow"),
            "acme/billing/refunds/SKILL.md": skill_md("refunds"),
        }
    )
    assert uris(catalog) == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
    ]
    refunds = catalog.get("skill://acme/billing/refunds/SKILL.md")
    assert refunds is not None
    assert refunds.entry.skill.prefix == "acme/billing"
    assert catalog.get("skill://nope/SKILL.md") is None


@pytest.mark.parametrize(
    ("folder", "segment"),
    [
        ("user@host", "user%40host"),
        ("a:80", "a%3A80"),
        ("[::1]", "%5B%3A%3A1%5D"),
        ("a b", "a%20b"),
        ("%zz", "%25zz"),
        ("café", "caf%C3%A9"),
    ],
)
# Requirement rows: URI-09
def test_first_segment_is_encoded_into_a_reg_name_URI_09(folder: str, segment: str) -> None:
    skill = only(Catalog.from_files({f"{folder}/x/SKILL.md": skill_md("x")}))
    assert skill.uri == f"skill://{segment}/x/SKILL.md"
    assert skill.entry.skill.authority == segment
    assert SkillEntry.from_json(skill.entry.to_json()) == skill.entry


@pytest.mark.parametrize(
    ("folder", "segment"),
    [
        ("a?b", "a%3Fb"),
        ("a#b", "a%23b"),
        ("50%", "50%25"),
        ("v1:beta@x", "v1:beta@x"),
        ("ü", "%C3%BC"),
    ],
)
# Requirement rows: URI-10
def test_other_prefix_segments_are_valid_path_segments_URI_10(folder: str, segment: str) -> None:
    skill = only(Catalog.from_files({f"org/{folder}/x/SKILL.md": skill_md("x")}))
    assert skill.uri == f"skill://org/{segment}/x/SKILL.md"


def test_file_names_are_percent_encoded() -> None:
    files = {"x/SKILL.md": skill_md("x"), "x/my notes/ça va?.md": b"hi"}
    skill = only(Catalog.from_files(files))
    assert "skill://x/my%20notes/%C3%A7a%20va%3F.md" in manifest(skill)
    assert skill.files["skill://x/my%20notes/%C3%A7a%20va%3F.md"] == "my notes/ça va?.md"


def test_unencodable_folder_is_omitted_and_unencodable_file_is_skipped() -> None:
    files = {
        "bad\x01dir/x/SKILL.md": skill_md("x"),
        "y/SKILL.md": skill_md("y"),
        "y/ok.md": b"ok",
        "y/bad\x7fname.md": b"never served",
    }
    catalog = Catalog.from_files(files)
    left_out = omitted(catalog, OmitCode.BAD_PATH)
    assert left_out.path == "bad\x01dir/x"
    assert left_out.uri is None
    skill = only(catalog)
    assert set(manifest(skill)) == {"skill://y/SKILL.md", "skill://y/ok.md"}
    assert [f.code for f in skill.findings] == ["bad-file-name"]


# Requirement rows: ENTRY-08
def test_every_file_listed_exactly_once_ENTRY_08() -> None:
    files = {"x/SKILL.md": skill_md("x")} | {f"x/d{i % 3}/f{i}.txt": bytes([i]) for i in range(40)}
    skill = only(Catalog.from_files(files))
    listed = manifest(skill)
    assert len(listed) == len(files)
    for path, data in files.items():
        assert listed["skill://" + path] == (compute_digest(data), len(data))


# Requirement rows: URI-12, ENTRY-13, ENTRY-24
def test_nested_skills_are_published_flat_and_complete_URI_12_ENTRY_13_ENTRY_24() -> None:
    files = {"a/SKILL.md": skill_md("a"), "a/sub/SKILL.md": skill_md("sub"), "a/sub/x.md": b"x"}
    catalog = Catalog.from_files(files)
    assert uris(catalog) == ["skill://a/SKILL.md", "skill://a/sub/SKILL.md"]
    outer, inner = catalog.skills
    assert set(manifest(outer)) == {
        "skill://a/SKILL.md",
        "skill://a/sub/SKILL.md",
        "skill://a/sub/x.md",
    }
    assert set(manifest(inner)) == {"skill://a/sub/SKILL.md", "skill://a/sub/x.md"}
    assert manifest(outer)["skill://a/sub/x.md"] == manifest(inner)["skill://a/sub/x.md"]
    for skill in catalog.skills:
        assert set(skill.entry.to_json()) == {"uri", "frontmatter", "resources"}
    assert inner.entry.skill.prefix == "a"


def test_omitted_enclosing_skill_does_not_hide_a_valid_nested_skill() -> None:
    files = {
        "a/SKILL.md": b"# no frontmatter\n",
        "a/sub/SKILL.md": skill_md("sub"),
        "a/other.md": b"o",
    }
    catalog = Catalog.from_files(files)
    assert uris(catalog) == ["skill://a/sub/SKILL.md"]
    assert set(manifest(only(catalog))) == {"skill://a/sub/SKILL.md"}
    assert omitted(catalog, OmitCode.FRONTMATTER).path == "a"


def test_omitted_nested_skill_stays_supporting_content_of_its_enclosing_skill() -> None:
    files = {"a/SKILL.md": skill_md("a"), "a/sub/SKILL.md": skill_md("other-name")}
    catalog = Catalog.from_files(files)
    assert set(manifest(only(catalog))) == {"skill://a/SKILL.md", "skill://a/sub/SKILL.md"}
    assert omitted(catalog, OmitCode.NAME_MISMATCH).path == "a/sub"


def test_skill_md_at_the_top_of_a_root_is_omitted() -> None:
    catalog = Catalog.from_files({"SKILL.md": skill_md("x"), "y/SKILL.md": skill_md("y")})
    assert uris(catalog) == ["skill://y/SKILL.md"]
    top = omitted(catalog, OmitCode.TOP_LEVEL)
    assert top.path == ""
    assert top.uri is None


# --- limits: ENTRY-19 ------------------------------------------------------------------------------


# Requirement rows: ENTRY-19
def test_skill_with_513_files_is_not_served_ENTRY_19() -> None:
    files = {"x/SKILL.md": skill_md("x")} | {f"x/f{i}": b"" for i in range(512)}
    catalog = Catalog.from_files(files)
    left_out = omitted(catalog, OmitCode.OVER_LIMIT)
    assert "513 files" in left_out.reason
    assert "512 files" in left_out.reason


# Requirement rows: ENTRY-19
def test_skill_of_exactly_512_files_and_16_MiB_is_served_ENTRY_19() -> None:
    text = skill_md("x")
    files = {"x/SKILL.md": text, "x/big": b"\0" * (16 * 1024 * 1024 - len(text) - 510)}
    files |= {f"x/f{i}": b"." for i in range(510)}
    skill = only(Catalog.from_files(files))
    assert len(manifest(skill)) == 512
    assert skill.entry.total_size == 16 * 1024 * 1024


# Requirement rows: ENTRY-19
def test_skill_one_byte_over_16_MiB_is_not_served_ENTRY_19() -> None:
    text = skill_md("x")
    files = {"x/SKILL.md": text, "x/big": b"\0" * (16 * 1024 * 1024 + 1 - len(text))}
    left_out = omitted(Catalog.from_files(files), OmitCode.OVER_LIMIT)
    assert "16777217 bytes" in left_out.reason
    assert "16777216 bytes" in left_out.reason


# Requirement rows: ENTRY-19
def test_nested_files_count_towards_the_enclosing_skill_ENTRY_19() -> None:
    files = {"a/SKILL.md": skill_md("a"), "a/sub/SKILL.md": skill_md("sub")}
    files |= {f"a/sub/f{i}": b"" for i in range(3)}
    catalog = CatalogBuilder(limits=Limits(max_resources=4)).build([RootSnapshot.from_files(files)])
    assert uris(catalog) == ["skill://a/sub/SKILL.md"]
    assert omitted(catalog, OmitCode.OVER_LIMIT).path == "a"


# --- collisions: SIL-05, WG-06, ORG-10 -----------------------------------------------------------


@pytest.mark.parametrize(
    "paths",
    [
        ("a.md", "A.md"),
        ("caf\u00e9.md", "cafe\u0301.md"),
        ("Docs", "docs/x.md"),
        ("STRASSE.md", "straße.md"),
    ],
)
# Requirement rows: SIL-05, WG-06
def test_paths_colliding_under_case_folding_or_nfc_are_omitted_SIL_05_WG_06(
    paths: tuple[str, str],
) -> None:
    files = {"x/SKILL.md": skill_md("x")} | {f"x/{path}": b"." for path in paths}
    catalog = Catalog.from_files(files)
    assert catalog.skills == ()
    reason = omitted(catalog, OmitCode.PATH_COLLISION).reason
    assert "case-insensitive" in reason


# Requirement rows: ORG-10
def test_same_name_at_two_paths_both_published_with_a_warning_ORG_10() -> None:
    files = {
        "acme/billing/refunds/SKILL.md": skill_md("refunds"),
        "acme/support/refunds/SKILL.md": skill_md("refunds"),
    }
    catalog = Catalog.from_files(files)
    assert len(catalog.skills) == 2
    assert catalog.duplicate_names == {
        "refunds": (
            "skill://acme/billing/refunds/SKILL.md",
            "skill://acme/support/refunds/SKILL.md",
        )
    }
    first, _ = catalog.skills
    (warning,) = catalog.findings(first)
    assert warning.code == "duplicate-name"
    assert warning.severity == Severity.WARNING
    assert "skill://acme/support/refunds/SKILL.md" in warning.message
    assert first.findings == ()  # the skill itself is unchanged; the catalog adds the warning


# Requirement rows: ORG-10
def test_many_duplicates_are_summarised_ORG_10() -> None:
    files = {f"p{i}/x/SKILL.md": skill_md("x") for i in range(6)}
    catalog = Catalog.from_files(files)
    (warning,) = catalog.findings(catalog.skills[0])
    assert "and 2 more" in warning.message


def test_same_uri_from_two_roots_omits_both() -> None:
    roots = [
        RootSnapshot.from_files({"x/SKILL.md": skill_md("x")}),
        RootSnapshot.from_files({"x/SKILL.md": skill_md("x", "other")}),
    ]
    catalog = CatalogBuilder().build(roots)
    assert catalog.skills == ()
    assert [(o.root, o.code) for o in catalog.omitted] == [
        (0, OmitCode.URI_COLLISION),
        (1, OmitCode.URI_COLLISION),
    ]
    assert "root 1 has the same skill path" in catalog.omitted[0].reason
    assert "root 0 has the same skill path" in catalog.omitted[1].reason


def test_skill_inside_another_roots_skill_omits_both() -> None:
    roots = [
        RootSnapshot.from_files({"a/SKILL.md": skill_md("a"), "a/sub/x.md": b"root 0"}),
        RootSnapshot.from_files({"a/sub/SKILL.md": skill_md("sub"), "a/sub/x.md": b"root 1"}),
        RootSnapshot.from_files({"b/SKILL.md": skill_md("b")}),
    ]
    catalog = CatalogBuilder().build(roots)
    assert uris(catalog) == ["skill://b/SKILL.md"]
    reasons = {o.path: o.reason for o in catalog.omitted}
    assert "root 1 has a skill inside it (skill://a/sub)" in reasons["a"]
    assert "root 0 has an enclosing skill (skill://a)" in reasons["a/sub"]


def test_nested_skills_in_one_root_are_not_a_collision() -> None:
    catalog = CatalogBuilder().build(
        [
            RootSnapshot.from_files({"a/SKILL.md": skill_md("a"), "a/b/SKILL.md": skill_md("b")}),
            RootSnapshot(),
        ]
    )
    assert uris(catalog) == ["skill://a/SKILL.md", "skill://a/b/SKILL.md"]


# --- dynamic skills: ENTRY-15, URI-13, LIST-11 ---------------------------------------------------


# Requirement rows: ENTRY-15
def test_dynamic_skill_publishes_resources_dynamic_ENTRY_15() -> None:
    daily = Generated(
        "skill://reports/daily/SKILL.md", {"SKILL.md": skill_md("daily", "Today's report")}
    )
    catalog = Catalog.from_files(spec_files(), dynamic=[daily])
    assert uris(catalog) == ["skill://pdf-processing/SKILL.md", "skill://reports/daily/SKILL.md"]
    skill = catalog.skills[1]
    assert skill.is_dynamic
    assert skill.root is None
    assert skill.folder == "reports/daily"
    assert skill.entry.to_json() == {
        "uri": "skill://reports/daily/SKILL.md",
        "frontmatter": {"name": "daily", "description": "Today's report"},
        "resources": "dynamic",
    }
    assert dict(skill.files) == {}


# Requirement rows: URI-13, LIST-11
def test_domain_native_scheme_is_served_like_skill_URI_13_LIST_11() -> None:
    refunds = Generated(
        "github://owner/repo/skills/refunds/SKILL.md", {"SKILL.md": skill_md("refunds")}
    )
    catalog = Catalog.from_files(spec_files(), dynamic=[refunds])
    assert uris(catalog) == [
        "github://owner/repo/skills/refunds/SKILL.md",
        "skill://pdf-processing/SKILL.md",
    ]


def test_dynamic_skill_without_skill_md_or_with_bad_frontmatter_is_omitted() -> None:
    gone = Generated("skill://a/gone/SKILL.md", {})
    bad = Generated("skill://a/bad/SKILL.md", {"SKILL.md": skill_md("other")})
    catalog = Catalog.from_files({}, dynamic=[gone, bad])
    assert catalog.skills == ()
    assert {(o.path, o.code, o.root) for o in catalog.omitted} == {
        ("skill://a/gone/SKILL.md", OmitCode.UNAVAILABLE, None),
        ("skill://a/bad/SKILL.md", OmitCode.NAME_MISMATCH, None),
    }


def test_dynamic_skill_colliding_with_a_folder_omits_both() -> None:
    dynamic = Generated("skill://pdf-processing/SKILL.md", {"SKILL.md": ex.SKILL_MD})
    catalog = Catalog.from_files(spec_files(), dynamic=[dynamic])
    assert catalog.skills == ()
    assert {(o.root, o.code) for o in catalog.omitted} == {
        (0, OmitCode.URI_COLLISION),
        (None, OmitCode.URI_COLLISION),
    }
    assert "a dynamic skill has the same skill path" in catalog.omitted[0].reason


# --- SIL-23, caching -----------------------------------------------------------------------------


# Requirement rows: SIL-23
def test_unchanged_files_give_the_same_entry_SIL_23() -> None:
    source = MemorySource(spec_files())
    first, second = source.scan(), source.scan()
    assert first == second
    assert first.skills[0].entry.resource_set == second.skills[0].entry.resource_set
    assert source.recheck(ex.SKILL_MD_URI) == first.skills[0]


def test_a_changed_file_changes_the_entry() -> None:
    source = MemorySource(spec_files())
    before = only(source.scan())
    source.write("pdf-processing/templates/invoice.md", b"# Invoice v2\n")
    after = only(source.scan())
    assert before.entry.resource_set != after.entry.resource_set


def test_frontmatter_verdicts_are_cached_by_digest_and_name() -> None:
    builder = CatalogBuilder()
    text = skill_md("x")
    snapshot = RootSnapshot(
        files=[SnapshotFile.of("x/SKILL.md", text), SnapshotFile.of("p/x/SKILL.md", text)]
    )
    first = builder.build([snapshot])
    # Without bytes, the verdict can only come from the cache of the previous build.
    bare = RootSnapshot(files=[SnapshotFile("x/SKILL.md", len(text), compute_digest(text))])
    second = builder.build([bare])
    assert uris(second) == ["skill://x/SKILL.md"]
    assert second.skills[0].entry == first.get("skill://x/SKILL.md").entry  # type: ignore[union-attr]


def test_verdict_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import skills_core.server.catalog as catalog_module

    monkeypatch.setattr(catalog_module, "_MAX_CACHED_VERDICTS", 1)
    source = MemorySource({f"s{i}/SKILL.md": skill_md(f"s{i}") for i in range(3)})
    source.scan()
    for i in range(3):
        assert isinstance(source.recheck(f"skill://s{i}/SKILL.md"), PublishedSkill)


# --- published entries are valid wire entries ----------------------------------------------------


def test_every_published_entry_passes_full_validation() -> None:
    files = {
        "a/SKILL.md": skill_md("a", extra="metadata:\n  k: v\n"),
        "a/sub/SKILL.md": skill_md("sub"),
        "a/sub/x y.md": b"\xff",
        "org/te:am/b/SKILL.md": skill_md("b"),
        "org/te:am/b/empty": b"",
        "u@x/c/SKILL.md": skill_md("c"),
    }
    catalog = Catalog.from_files(files)
    assert len(catalog.skills) == 4
    for skill in catalog.skills:
        assert SkillEntry.from_json(skill.entry.to_json()) == skill.entry
        assert skill.entry.resource(skill.uri) is not None


# --- value objects --------------------------------------------------------------------------------


def test_catalog_accessors() -> None:
    catalog = Catalog.from_files(spec_files() | {"b/SKILL.md": b"oops"})
    assert catalog.entries == (catalog.skills[0].entry,)
    assert catalog.manifest_json() == [ex.entry_json()]
    assert catalog.get(ex.SKILL_MD_URI) is catalog.get(ex.SKILL_MD_URI)
    assert catalog.duplicate_names == {}


def test_catalog_skills_must_be_sorted_and_unique() -> None:
    skill = only(Catalog.from_files(spec_files()))
    with pytest.raises(ValueError, match="sorted"):
        Catalog(skills=(skill, skill))


@pytest.mark.parametrize("path", ["", "/a", "a//b", "a/./b", "a/../b", "a/", "a\0b"])
def test_in_memory_paths_must_be_clean(path: str) -> None:
    with pytest.raises(ValueError, match="path"):
        check_relative_path(path)
    with pytest.raises(ValueError, match="path"):
        Catalog.from_files({path: b""})


def test_snapshot_file_keeps_bytes_of_skill_md_only() -> None:
    assert SnapshotFile.of("x/SKILL.md", b"abc").data == b"abc"
    assert SnapshotFile.of("SKILL.md", b"abc").data == b"abc"
    other = SnapshotFile.of("x/a.md", b"abc")
    assert other.data is None
    assert (other.size, other.digest) == (3, compute_digest(b"abc"))


def test_problems_in_a_skill_become_findings_and_a_refused_skill_md_an_omission() -> None:
    problems = [
        SourceProblem(root=0, path="x/link.md", code=ProblemCode.SYMLINK, reason="is a link"),
        SourceProblem(root=0, path="y/SKILL.md", code=ProblemCode.SYMLINK, reason="is a link"),
        SourceProblem(root=0, path="elsewhere/fifo", code=ProblemCode.SPECIAL_FILE, reason="fifo"),
    ]
    snapshot = RootSnapshot(files=[SnapshotFile.of("x/SKILL.md", skill_md("x"))], problems=problems)
    catalog = CatalogBuilder().build([snapshot])
    (finding,) = only(catalog).findings
    assert (finding.code, finding.message) == ("symlink", "x/link.md: is a link")
    refused = omitted(catalog, OmitCode.REFUSED)
    assert (refused.path, refused.uri) == ("y", None)
    assert catalog.problems == tuple(problems)


def test_build_skill_when_skill_md_vanished() -> None:
    result = CatalogBuilder().build_skill(
        0, "x", RootSnapshot(files=[SnapshotFile.of("x/a.md", b"a")])
    )
    assert isinstance(result, OmittedSkill)
    assert result.code is OmitCode.REFUSED


def test_build_skill_with_unencodable_folder() -> None:
    snapshot = RootSnapshot.from_files({"x\x01/SKILL.md": skill_md("x")})
    result = CatalogBuilder().build_skill(0, "x\x01", snapshot)
    assert isinstance(result, OmittedSkill)
    assert result.code is OmitCode.BAD_PATH


def test_builder_folder_of() -> None:
    builder = CatalogBuilder(scheme="docs")
    assert builder.folder_of("docs://a/caf%C3%A9/SKILL.md") == "a/café"
    for uri in [
        "skill://a/SKILL.md",
        "docs://SKILL.md",
        "docs://a/x.md",
        "docs://a/%41/SKILL.md",
        "nope",
    ]:
        assert builder.folder_of(uri) is None
    with pytest.raises(ValueError, match="scheme"):
        CatalogBuilder(scheme="1x")


# Requirement rows: URI-13
def test_custom_scheme_for_folders_URI_13() -> None:
    source = MemorySource({"x/SKILL.md": skill_md("x")}, scheme="docs")
    assert uris(source.scan()) == ["docs://x/SKILL.md"]
    assert source.scheme == "docs"


def test_published_skill_defaults() -> None:
    entry = SkillEntry.from_json(ex.entry_json())
    skill = PublishedSkill(entry=entry, root=0, folder="pdf-processing")
    assert skill.files == MappingProxyType({})
    assert skill.findings == ()


def test_dynamic_skill_uri_must_be_valid() -> None:
    with pytest.raises(URIError):
        MemorySource(dynamic=[Generated("skill://a/x.md", {})])


def test_trusted_entries_stay_valid_even_if_validation_were_lenient(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defence in depth: the entry builder re-checks what it relies on, whatever the validator says."""
    import skills_core.server._rules as rules_module

    monkeypatch.setattr(rules_module, "validate_frontmatter", lambda data, directory_name=None: ())
    catalog = Catalog.from_files(
        {
            "x/SKILL.md": b"---\nname: x\ndescription: 5\n---\n",
            "Bad_Name/SKILL.md": b"---\nname: Bad_Name\ndescription: d\n---\n",
        }
    )
    assert catalog.skills == ()
    reasons = sorted(o.reason for o in catalog.omitted)
    assert reasons == [
        "the frontmatter has no string 'description'",
        "the skill name 'Bad_Name' breaks the naming rules",
    ]


def test_three_roots_with_one_skill_path() -> None:
    snapshot = RootSnapshot.from_files({"x/SKILL.md": skill_md("x")})
    catalog = CatalogBuilder().build([snapshot, snapshot, snapshot])
    assert catalog.skills == ()
    assert (
        "root 1 has the same skill path; root 2 has the same skill path"
        in catalog.omitted[0].reason
    )


class Plain(DynamicSkill):
    """A dynamic skill that keeps the default ``listed``."""

    @property
    def uri(self) -> str:
        return "skill://plain/SKILL.md"

    def read(self, file_path: str) -> bytes | None:
        return skill_md("plain") if file_path == "SKILL.md" else None

    def list_directory(self, dir_path: str) -> Sequence[tuple[str, bool]] | None:
        return [("SKILL.md", False)] if not dir_path else None


def test_dynamic_skills_are_listed_by_default() -> None:
    skill = only(Catalog.from_files({}, dynamic=[Plain()]))
    assert skill.listed


def test_memory_source_editing_rules() -> None:
    source = MemorySource({"a/b.md": b"b"})
    with pytest.raises(ValueError, match="is a folder"):
        source.write("a", b"x")
    with pytest.raises(ValueError, match="is a file"):
        source.mkdir("a/b.md")
    with pytest.raises(ValueError, match="is a file"):
        source.write("a/b.md/c", b"x")
    with pytest.raises(KeyError):
        source.delete("a/nope")
    with pytest.raises(ValueError, match="path"):
        source.delete("")
    with pytest.raises(IndexError):
        source.write("x", b"", root=3)
    source.mkdir("a/empty/deeper")
    source.delete("a")
    source.write("a", b"now a file")
    assert source.scan().skills == ()


def test_memory_source_polls_re_scan_when_a_skill_md_comes_or_goes() -> None:
    """As the filesystem source: a skill added or removed re-scans; other edits do not."""
    source = MemorySource(spec_files())
    first = source.scan()
    assert source.poll(10**9) is None
    source.write("pdf-processing/templates/credit-note.md", ex.CREDIT_NOTE)
    source.mkdir("pdf-processing/empty")
    assert source.poll(0) is None
    source.write("other/SKILL.md", skill_md("other"))
    polled = source.poll(10**9)  # no clock: a known change re-scans at once
    assert polled is not None
    assert uris(polled) == ["skill://other/SKILL.md", ex.SKILL_MD_URI]
    assert source.poll(0) is None
    source.delete("other")
    polled = source.poll(0)
    assert polled is not None
    assert uris(polled) == uris(first)
    source.delete("pdf-processing/templates/credit-note.md")
    assert source.poll(0) is None


def test_builder_keeps_parsed_skill_md_files_once_asked() -> None:
    """What a digest index saves: the parser's output by digest; the rules still run on it."""
    builder = CatalogBuilder()
    data = skill_md("a")
    digest = compute_digest(data)
    assert builder.parsed_for([digest]) == {}  # not kept unless asked
    assert not builder.knows(digest, "a")
    builder.learn({digest: {"name": "a", "description": "From the index"}})
    assert builder.knows(digest, "a")
    assert builder.knows(digest, "b")  # the verdict for any folder name follows from it
    snapshot = RootSnapshot(files=[SnapshotFile("b/SKILL.md", len(data), digest)])
    catalog = builder.build([snapshot])
    assert catalog.skills == ()
    assert omitted(catalog, OmitCode.NAME_MISMATCH)  # validated afresh for folder "b"
    snapshot = RootSnapshot(files=[SnapshotFile("a/SKILL.md", len(data), digest)])
    skill = only(builder.build([snapshot]))
    assert skill.entry.description == "From the index"  # no bytes: the kept parse was used
    other, left_out = skill_md("c"), skill_md("x")
    builder.build([RootSnapshot.from_files({"c/SKILL.md": other, "e/SKILL.md": left_out})])
    # c is published: its record holds its frontmatter (in its encoded entry), so its parse is
    # not kept twice; e is left out (its name is x): its parse is kept, for a digest index
    assert record_digest(builder.records_for(0)["c"]) == compute_digest(other)
    kept = builder.parsed_for([compute_digest(other), compute_digest(left_out)])
    assert set(kept) == {compute_digest(left_out)}
    assert builder.parsed_for([digest]) == {}  # forgotten by the call before
