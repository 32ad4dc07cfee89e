"""The validation engine (``skills_core.check``): folders as ``serve`` reads them, entries as a host
does with the same Agent Skills rules, entries built and compared (FMT-01, FMT-03, URI-06, URI-07,
ENTRY-03, ENTRY-05, ENTRY-08, ENTRY-17, ENTRY-19, ORG-10, SIL-05, WG-09)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from check_helpers import spec_entry, write_tree
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from server_helpers import skill_md

from skills_core import spec_examples as ex
from skills_core.check import (
    ChangeKind,
    SubjectKind,
    ValidationReport,
    build_entry,
    compare_entries,
    entries_in,
    validate_entries,
    validate_folder,
)
from skills_core.digest import compute_digest
from skills_core.entry import Limits, SkillEntry
from skills_core.errors import InvalidEntryError, JsonRpcError
from skills_core.frontmatter import ABSENT
from skills_core.server.filesystem import FilesystemSource
from skills_core.validation import Severity


def codes(report: ValidationReport, severity: Severity | None = None) -> list[str]:
    return sorted(
        f.code for _, f in report.all_findings() if severity is None or f.severity is severity
    )


# --- folders --------------------------------------------------------------------------------


def test_a_valid_folder_gives_the_entry_serve_publishes(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "skills", {f"pdf-processing/{p}": d for p, d in ex.FILES.items()})
    report = validate_folder(root)
    (skill,) = report.skills
    assert skill.kind is SubjectKind.FOLDER
    assert skill.path == str(root / "pdf-processing")
    assert skill.findings == ()
    assert skill.entry is not None
    assert skill.entry.to_json() == spec_entry()
    assert build_entry(root / "pdf-processing").to_json() == spec_entry()
    assert build_entry(root / "pdf-processing" / "SKILL.md") == skill.entry
    # The same, given the skill folder itself or its SKILL.md.
    for path in (root / "pdf-processing", root / "pdf-processing" / "SKILL.md"):
        (again,) = validate_folder(path).skills
        assert again.entry == skill.entry
        assert again.path == str(root / "pdf-processing")


def test_hidden_files_and_excludes_are_left_out_as_serve_leaves_them_out(tmp_path: Path) -> None:
    files = {f"pdf-processing/{p}": d for p, d in ex.FILES.items()}
    files["pdf-processing/.env"] = b"TOKEN=1\n"
    root = write_tree(tmp_path / "skills", files)
    assert build_entry(root / "pdf-processing").to_json() == spec_entry()
    with_hidden = build_entry(root / "pdf-processing", include_hidden=True)
    assert with_hidden.resource("skill://pdf-processing/.env") is not None
    narrowed = build_entry(root / "pdf-processing", exclude=("templates/",))
    assert not isinstance(narrowed.resources, str)
    assert [r.uri for r in narrowed.resources if "templates" in r.uri] == []
    (skill,) = validate_folder(root, exclude=("templates/",)).skills
    assert skill.entry == narrowed


def test_frontmatter_findings_carry_file_line_and_column(tmp_path: Path) -> None:
    """FMT-01, URI-07: every finding names its file, and its line and column where it has one."""
    root = write_tree(
        tmp_path,
        {
            "bad-dir/SKILL.md": b"---\nname: Bad_Name\ndescription: ''\ncreated: 2025-10-20\n"
            b"allowed-tools: [Bash, Read]\n---\n"
        },
    )
    (skill,) = validate_folder(root).skills
    file = str(root / "bad-dir" / "SKILL.md")
    placed = {(f.code, f.severity, f.file, f.line, f.column) for f in skill.findings}
    assert placed == {
        ("name-invalid", Severity.ERROR, file, 2, 7),
        ("description-empty", Severity.ERROR, file, 3, 14),
        ("portability-date", Severity.WARNING, file, 4, 10),
        ("allowed-tools-not-string", Severity.ERROR, file, 5, 16),
    }
    assert skill.entry is None
    assert not skill.valid


def test_a_parse_error_is_one_located_finding(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"x/SKILL.md": b"---\nname: x\nname: y\ndescription: d\n---\n"})
    (skill,) = validate_folder(root).skills
    (only,) = skill.findings
    assert (only.code, only.line, only.column) == ("frontmatter-duplicate-key", 3, 1)


def test_over_limit_folders_get_the_codes_entries_get(tmp_path: Path) -> None:
    """ENTRY-17, ENTRY-19: a skill over the limits is reported with its counts; serve omits it."""
    files = {"big/SKILL.md": skill_md("big", "d")}
    files.update({f"big/f{i}.txt": b"x" * 20 for i in range(4)})
    root = write_tree(tmp_path, files)
    limits = Limits(max_resources=3, max_total_bytes=100)  # SKILL.md is 33 bytes: 113 in all
    (skill,) = validate_folder(root, limits=limits).skills
    assert sorted(f.code for f in skill.errors) == ["too-large", "too-many-resources"]
    assert "5 files" in skill.errors[0].message or "5 files" in skill.errors[1].message
    assert all(f.file == str(root / "big" / "SKILL.md") for f in skill.errors)
    assert skill.entry is None
    assert FilesystemSource([root], limits=limits).scan().skills == ()
    (fits,) = validate_folder(root).skills
    assert fits.valid


def test_a_file_too_large_to_hash_makes_the_skill_too_large(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"huge/SKILL.md": skill_md("huge", "d")})
    with (root / "huge" / "video.bin").open("wb") as sparse:
        sparse.truncate(300 * 1024 * 1024)  # past the walk's limit: never read
    (skill,) = validate_folder(root).skills
    (only,) = skill.errors
    assert only.code == "too-large"


def test_links_and_special_files_are_refused_where_they_are(tmp_path: Path) -> None:
    """WG-09: links are never followed; each refusal is reported once, in its innermost skill."""
    root = write_tree(
        tmp_path,
        {
            "outer/SKILL.md": skill_md("outer", "d"),
            "outer/inner/SKILL.md": skill_md("inner", "d"),
        },
    )
    (root / "outer" / "inner" / "link.md").symlink_to("/etc/passwd")
    (root / "outer" / "top-link").symlink_to(root)
    (root / "stray").symlink_to("/etc")
    os.mkfifo(root / "outer" / "pipe")
    report = validate_folder(root)
    inner, outer = sorted(report.skills, key=lambda s: len(s.path), reverse=True)
    assert [(f.code, f.file) for f in inner.findings] == [
        ("symlink", str(root / "outer" / "inner" / "link.md"))
    ]
    assert sorted((f.code, f.file) for f in outer.findings) == [
        ("special-file", str(root / "outer" / "pipe")),
        ("symlink", str(root / "outer" / "top-link")),
    ]
    assert [(f.code, f.file) for f in report.findings] == [("symlink", str(root / "stray"))]
    assert all(f.severity is Severity.WARNING for _, f in report.all_findings())
    assert report.valid


def test_a_linked_skill_md_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = write_tree(tmp_path / "secret", {"SKILL.md": b"---\nname: s\ndescription: 1\n---\n"})
    root = tmp_path / "skills"
    (root / "linked").mkdir(parents=True)
    (root / "linked" / "SKILL.md").symlink_to(secret / "SKILL.md")
    (root / "linked" / "other.md").write_text("x")
    report = validate_folder(root)
    (skill,) = report.skills
    # One error, at the link; what it points to (a description that is a number) is never read.
    assert [(f.code, f.severity, f.file) for f in skill.findings] == [
        ("refused", Severity.ERROR, str(root / "linked" / "SKILL.md"))
    ]
    assert "symbolic link" in skill.findings[0].message
    assert report.findings == ()


def test_a_fifo_skill_md_is_refused_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "pipe").mkdir(parents=True)
    os.mkfifo(root / "pipe" / "SKILL.md")
    (skill,) = validate_folder(root).skills
    assert [f.code for f in skill.findings] == ["refused"]


def test_catalog_findings_are_placed(tmp_path: Path) -> None:
    """ORG-10: a shared name sits at the name's value; a file name that cannot be a URI at it."""
    root = write_tree(
        tmp_path,
        {
            "a/dup/SKILL.md": skill_md("dup", "d"),
            "b/dup/SKILL.md": skill_md("dup", "d"),
            "b/dup/bad\x7fname.md": b"x",
        },
    )
    first, second = validate_folder(root).skills
    (shared,) = first.findings
    assert (shared.code, shared.field, shared.line, shared.column) == (
        "duplicate-name",
        "/name",
        2,
        7,
    )
    assert shared.file == str(root / "a" / "dup" / "SKILL.md")
    assert sorted((f.code, f.file) for f in second.findings) == [
        ("bad-file-name", str(root / "b" / "dup" / "bad\x7fname.md")),
        ("duplicate-name", str(root / "b" / "dup" / "SKILL.md")),
    ]


def test_a_folder_name_that_cannot_be_a_uri(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"bad\x01name/SKILL.md": skill_md("bad", "d")})
    (skill,) = validate_folder(root).skills
    assert "bad-path" in [f.code for f in skill.errors]
    assert skill.uri is None


def test_path_collisions_are_errors_in_both_modes(tmp_path: Path) -> None:
    """SIL-05: two paths that are one file on a case-insensitive filesystem."""
    root = write_tree(tmp_path, {"c/SKILL.md": skill_md("c", "d"), "c/a.md": b"1", "c/A.md": b"2"})
    (skill,) = validate_folder(root).skills
    assert [f.code for f in skill.errors] == ["path-collision"]


def test_missing_paths_and_files_raise(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        validate_folder(tmp_path / "nope")
    write_tree(tmp_path, {"other/SKILL.md": skill_md("other", "d")})
    with pytest.raises(FileNotFoundError):
        validate_folder(tmp_path / "SKILL.md")  # not the skill next to it
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(NotADirectoryError):
        validate_folder(tmp_path / "x.json")
    with pytest.raises(FileNotFoundError):
        build_entry(tmp_path)
    assert [s.uri for s in validate_folder(tmp_path).skills] == ["skill://other/SKILL.md"]
    (tmp_path / "empty").mkdir()
    assert validate_folder(tmp_path / "empty").skills == ()


def test_build_entry_of_an_invalid_folder_names_every_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"x/SKILL.md": b"---\nname: y\ndescription: ''\n---\n"})
    with pytest.raises(InvalidEntryError) as caught:
        build_entry(root / "x")
    assert [p.code for p in caught.value.problems] == ["name-mismatch", "description-empty"]
    assert "SKILL.md:2:7:" in caught.value.problems[0].message


def test_ignoring_codes_counts_them(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"x/SKILL.md": skill_md("x", "d", extra="created: 2025-10-20\n")})
    report = validate_folder(root)
    assert report.passes()
    assert not report.passes(strict=True)
    quiet = report.without({"portability-date"})
    assert quiet.passes(strict=True)
    assert quiet.summary() == {
        "skills": 1,
        "valid": 1,
        "invalid": 0,
        "errors": 0,
        "warnings": 0,
        "notes": 0,
        "ignored": 1,
    }
    assert report.without(()) is report
    both = ValidationReport.merge([report, quiet])
    assert (len(both.skills), both.ignored, both.warning_count) == (2, 1, 1)


def test_an_ignored_error_never_makes_a_refused_skill_pass(tmp_path: Path) -> None:
    """``serve`` refuses a skill without a description: ignoring the code hides the finding and
    counts it, but the skill stays invalid, in folder and entry modes alike."""
    root = write_tree(tmp_path, {"x/SKILL.md": b"---\nname: x\n---\n"})
    report = validate_folder(root)
    assert codes(report) == ["description-missing"]
    quiet = report.without({"description-missing"})
    (skill,) = quiet.skills
    assert (skill.findings, skill.ignored_errors, skill.valid) == (
        (),
        ("description-missing",),
        False,
    )
    assert not quiet.passes()
    assert not quiet.valid
    assert quiet.summary()["invalid"] == 1
    assert skill.to_json()["ignored_errors"] == ["description-missing"]
    assert FilesystemSource([str(root)]).scan().skills == ()  # serve refuses it indeed
    entry = validate_entries(
        {"uri": "skill://x/SKILL.md", "frontmatter": {"name": "x"}, "resources": []}
    )
    assert not entry.without({"description-missing", "missing-skill-md"}).passes()
    # A warning ignored is simply gone.
    warned = write_tree(tmp_path / "w", {"w/SKILL.md": skill_md("w", "d", extra="v: 2025-10-20\n")})
    assert validate_folder(warned).without({"portability-date"}).passes(strict=True)


# --- entries --------------------------------------------------------------------------------


def test_entries_in_every_shape() -> None:
    entry = spec_entry()
    listing = {"skills": [entry, entry], "resultType": "complete"}
    assert entries_in(entry) == [entry]
    assert entries_in([entry, 5]) == [entry, 5]
    assert entries_in(listing) == [entry, entry]
    assert entries_in({"skill": entry}) == [entry]
    assert entries_in({"jsonrpc": "2.0", "id": 1, "result": listing}) == [entry, entry]
    assert entries_in({"jsonrpc": "2.0", "id": 1, "result": {"skill": entry}}) == [entry]
    assert entries_in("junk") == ["junk"]
    with pytest.raises(JsonRpcError, match="Skill not found") as caught:
        entries_in(
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Skill not found"}}
        )
    assert caught.value.rpc_code == -32602


def test_an_empty_description_fails_in_entry_mode_as_in_folder_mode(tmp_path: Path) -> None:
    """The same Agent Skills rules in both modes (today a host accepts it, the folder fails)."""
    entry = spec_entry()
    entry["frontmatter"]["description"] = ""
    report = validate_entries(entry, source="e.json")
    (skill,) = report.skills
    assert [(f.code, f.field, f.file) for f in skill.findings] == [
        ("description-empty", "/frontmatter/description", "e.json")
    ]
    assert SkillEntry.from_json(entry)  # a host would take it
    assert skill.entry is None  # but it is not valid


def test_entry_problems_that_restate_a_rule_are_given_once() -> None:
    entry = spec_entry()
    entry["frontmatter"]["name"] = "other"
    entry["frontmatter"]["description"] = 5
    (skill,) = validate_entries(entry).skills
    assert [(f.code, f.field) for f in skill.findings] == [
        ("name-mismatch", "/frontmatter/name"),
        ("description-not-string", "/frontmatter/description"),
    ]
    (bare,) = validate_entries({"uri": "skill://x/SKILL.md", "resources": []}).skills
    assert [f.code for f in bare.findings] == ["missing-frontmatter", "missing-skill-md"]


def test_entries_share_names_and_limits() -> None:
    """ORG-10 within one listing, and ENTRY-17's limits from the entry alone."""
    a = spec_entry()
    b = spec_entry()
    b["uri"] = "skill://other/pdf-processing/SKILL.md"
    b["resources"] = [dict(r, uri=r["uri"].replace("//", "//other/")) for r in b["resources"]]
    report = validate_entries({"skills": [a, b]}, limits=Limits(max_resources=2))
    assert [[f.code for f in s.findings] for s in report.skills] == [
        ["too-many-resources", "duplicate-name"],
        ["too-many-resources", "duplicate-name"],
    ]
    assert "skill://other/pdf-processing/SKILL.md" in report.skills[0].findings[1].message


def test_entry_json_is_strict_utf8() -> None:
    entry = spec_entry()
    entry["frontmatter"]["description"] = "\ud800"
    entry["uri"] = "skill://pdf-processing/SKILL.md"
    document = validate_entries([entry, {"uri": "skill://\udcff/SKILL.md"}]).to_json()
    json.dumps(document, ensure_ascii=False).encode("utf-8")  # no lone surrogate left


# --- the two modes agree (a differential test) ----------------------------------------------

NAMES = st.sampled_from(["alpha", "beta-2", "c"])
#: Each field's values: mostly fine (repeated, so drawn more often), some breaking a rule.
FIELD_VALUES = {
    "name": st.sampled_from(
        ["<folder>"] * 12 + ["other-name", "Bad_Name", "", 5, None, "<absent>"]
    ),
    "description": st.sampled_from(["ok"] * 12 + ["", "  ", "x" * 1025, None, 3, "<absent>"]),
    "compatibility": st.sampled_from(["<absent>"] * 8 + ["py3", "", "x" * 501, ["a"]]),
    "metadata": st.sampled_from(
        ["<absent>"] * 8 + [{"a": "b"}, {"v": 1}, "str", {"io.modelcontextprotocol/k": "v"}]
    ),
    "license": st.sampled_from(["<absent>"] * 8 + ["MIT", 5]),
    "allowed-tools": st.sampled_from(["<absent>"] * 8 + ["Read Grep", "Read, Grep", ["Read"]]),
    "x-extra": st.sampled_from(["<absent>", {"deep": [1, True, None]}]),
}


@st.composite
def skills(draw: st.DrawFn) -> tuple[str, dict[str, object], dict[str, bytes]]:
    folder = draw(NAMES)
    frontmatter: dict[str, object] = {}
    for key, values in FIELD_VALUES.items():
        value = draw(values)
        if value == "<absent>":
            continue
        frontmatter[key] = folder if value == "<folder>" else value
    files = {
        f"{draw(st.sampled_from(['', 'refs/']))}f{i}.md": b"x" * draw(st.integers(0, 700))
        for i in range(draw(st.integers(0, 4)))
    }
    return folder, frontmatter, files


def entry_of(
    folder: str, skill_md_bytes: bytes, frontmatter: object, files: dict[str, bytes]
) -> object:
    """The entry a server builds for the folder (written out by hand, from the spec)."""
    resources = [
        {
            "uri": f"skill://{folder}/SKILL.md",
            "digest": compute_digest(skill_md_bytes),
            "size": len(skill_md_bytes),
        }
    ]
    resources += [
        {"uri": f"skill://{folder}/{path}", "digest": compute_digest(data), "size": len(data)}
        for path, data in sorted(files.items())
    ]
    return {"uri": f"skill://{folder}/SKILL.md", "frontmatter": frontmatter, "resources": resources}


#: The codes of the Agent Skills rules (validate_frontmatter): both modes apply them in full.
RULE_PREFIXES = ("name-", "description-", "compatibility-", "metadata-", "license-", "allowed-")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skills())
def test_folder_and_entry_modes_give_the_same_error_codes(
    skill: tuple[str, dict[str, object], dict[str, bytes]],
) -> None:
    """FMT-01, ENTRY-03, ENTRY-05, ENTRY-17: the folder, and the entry a server builds for it."""
    folder, frontmatter, files = skill
    # JSON is YAML 1.2: each value written as JSON reads back as the same value.
    text = "".join(f"{key}: {json.dumps(value)}\n" for key, value in frontmatter.items())
    data = f"---\n{text}---\nbody\n".encode()
    # Small limits, so that some skills exceed them; but over the largest SKILL.md written here
    # (a SKILL.md larger than the total limit stops the catalog builder today, in serve too).
    limits = Limits(max_resources=4, max_total_bytes=2000)
    with tempfile.TemporaryDirectory() as tmp:
        tree = {f"{folder}/SKILL.md": data, **{f"{folder}/{p}": d for p, d in files.items()}}
        root = write_tree(Path(tmp), tree)
        (folder_skill,) = validate_folder(root, limits=limits).skills
        published = FilesystemSource([root], limits=limits).scan().skills
    entry = entry_of(folder, data, frontmatter, files)
    (entry_skill,) = validate_entries(entry, limits=limits).skills
    in_folder = sorted(f.code for f in folder_skill.errors)
    in_entry = sorted(f.code for f in entry_skill.errors)
    event("published" if published else "left out")
    event("over a limit" if {"too-large", "too-many-resources"} & set(in_entry) else "in limits")
    # The Agent Skills rules: the same codes, always.
    assert [c for c in in_folder if c.startswith(RULE_PREFIXES)] == [
        c for c in in_entry if c.startswith(RULE_PREFIXES)
    ]
    # The entry's own rules (limits) are reached in folder mode when serve reaches them: once the
    # frontmatter passes. Before that, folder mode reports what serve stops at.
    if not any(c.startswith(RULE_PREFIXES) for c in in_folder):
        assert in_folder == in_entry
    else:
        assert set(in_folder) <= set(in_entry)
    same_warnings = {"metadata-reserved-key", "allowed-tools-commas"}
    assert sorted(f.code for f in folder_skill.warnings if f.code in same_warnings) == sorted(
        f.code for f in entry_skill.warnings if f.code in same_warnings
    )
    # serve publishes exactly the valid folders, with the entry the engine gives.
    assert folder_skill.valid == bool(published)
    if published:
        assert folder_skill.entry == published[0].entry
        assert folder_skill.entry is not None
        assert folder_skill.entry.to_json() == entry
        assert entry_skill.entry == folder_skill.entry


# --- comparison -----------------------------------------------------------------------------


def test_comparing_an_entry_with_itself_finds_nothing() -> None:
    entry = SkillEntry.from_json(spec_entry())
    comparison = compare_entries(entry, entry)
    assert comparison.same
    assert comparison.to_json() == {
        "old_uri": entry.uri,
        "new_uri": entry.uri,
        "same": True,
        "frontmatter": [],
        "files": [],
    }


def test_comparison_in_old_and_new_wording() -> None:
    old = spec_entry()
    new = spec_entry(with_credit_note=True)
    old["frontmatter"]["license"] = "MIT"
    old["frontmatter"]["metadata"] = {"version": "1"}
    new["frontmatter"]["metadata"] = {"version": "2", "author": "me"}
    new["frontmatter"]["description"] = "New words."
    skill = new["resources"][0]
    skill["size"] += 1
    skill["digest"] = compute_digest(b"y" * skill["size"])
    comparison = compare_entries(SkillEntry.from_json(old), SkillEntry.from_json(new))
    assert not comparison.same
    assert [(c.pointer, c.change, c.old, c.new) for c in comparison.frontmatter] == [
        (
            "/description",
            ChangeKind.CHANGED,
            spec_entry()["frontmatter"]["description"],
            "New words.",
        ),
        ("/license", ChangeKind.REMOVED, "MIT", ABSENT),
        ("/metadata/version", ChangeKind.CHANGED, "1", "2"),
        ("/metadata/author", ChangeKind.ADDED, ABSENT, "me"),
    ]
    assert [(c.path, c.change, c.old_size, c.new_size) for c in comparison.files] == [
        ("SKILL.md", ChangeKind.CHANGED, old["resources"][0]["size"], skill["size"]),
        ("templates/credit-note.md", ChangeKind.ADDED, None, new["resources"][-1]["size"]),
    ]
    document: Any = comparison.to_json()
    assert document["frontmatter"][1] == {"pointer": "/license", "change": "removed", "old": "MIT"}
    assert document["files"][1]["change"] == "added"
    assert "old_size" not in document["files"][1]


def test_comparison_across_a_move_and_to_dynamic() -> None:
    old = SkillEntry.from_json(spec_entry())
    moved = spec_entry()
    moved["uri"] = "skill://acme/pdf-processing/SKILL.md"
    moved["resources"] = [
        dict(r, uri=r["uri"].replace("skill://", "skill://acme/")) for r in moved["resources"]
    ]
    comparison = compare_entries(old, SkillEntry.from_json(moved))
    assert (comparison.same, comparison.files, comparison.frontmatter) == (False, (), ())
    dynamic = dict(spec_entry(), resources="dynamic")
    to_dynamic = compare_entries(old, SkillEntry.from_json(dynamic))
    assert (to_dynamic.old_dynamic, to_dynamic.new_dynamic) == (False, True)
    assert {c.change for c in to_dynamic.files} == {ChangeKind.REMOVED}
    assert to_dynamic.to_json()["new_dynamic"] is True


# --- odd inputs -------------------------------------------------------------------------------


def test_names_that_are_not_utf8_or_not_uris(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    odd = os.fsencode(root) + b"/bad\xff"
    os.mkdir(odd)
    with open(odd + b"/SKILL.md", "wb") as out:
        out.write(skill_md("bad", "d"))
    (skill,) = validate_folder(root).skills
    assert [f.code for f in skill.errors] == ["bad-path", "name-mismatch"]
    document: Any = skill.to_json()
    assert document["path"].endswith("bad\\udcff")
    assert bytes.fromhex(document["path_hex"]) == odd
    # A root that is itself a skill, whose own name cannot be a URI segment.
    control = write_tree(tmp_path / "ctl\x01", {"SKILL.md": skill_md("ctl", "d")})
    (alone,) = validate_folder(control).skills
    assert [f.code for f in alone.errors] == ["bad-path", "name-mismatch"]
    assert "cannot be a skill URI" in alone.errors[0].message


def test_reading_a_left_out_skill_md_never_blocks_or_follows(tmp_path: Path) -> None:
    from skills_core.check import _read_skill_md

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "file").write_bytes(b"x" * 10)
    assert _read_skill_md(str(tmp_path / "fifo")) is None
    assert _read_skill_md(str(tmp_path / "dir")) is None
    assert _read_skill_md(str(tmp_path / "link")) is None
    assert _read_skill_md(str(tmp_path / "missing")) is None
    assert _read_skill_md(str(tmp_path / "file")) == b"x" * 10


def test_entry_documents_of_other_shapes() -> None:
    entry = spec_entry()
    assert entries_in({"jsonrpc": "2.0", "id": 1}) == [{"jsonrpc": "2.0", "id": 1}]
    assert entries_in({"resultType": "complete"}) == [{"resultType": "complete"}]
    assert entries_in({"skills": entry}) == [entry]  # not an array: one entry, checked as such
    (numbered,) = validate_entries(
        {"uri": 5, "frontmatter": {"name": "x", "description": "d"}}
    ).skills
    assert [f.code for f in numbered.errors] == ["bad-uri", "missing-resources"]
    (unparsable,) = validate_entries(
        {"uri": "skill://a b/SKILL.md", "frontmatter": {"name": "x", "description": "d"}}
    ).skills
    assert "name-mismatch" not in [f.code for f in unparsable.errors]


def test_many_entries_sharing_a_name() -> None:
    entries = []
    for prefix in "abcde":
        entry = spec_entry()
        entry["uri"] = f"skill://{prefix}/pdf-processing/SKILL.md"
        entry["resources"] = [
            dict(r, uri=r["uri"].replace("//", f"//{prefix}/")) for r in entry["resources"]
        ]
        entries.append(entry)
    first = validate_entries(entries).skills[0]
    (shared,) = first.warnings
    assert shared.message.endswith(
        "is also used by skill://b/pdf-processing/SKILL.md, skill://c/pdf-processing/SKILL.md, "
        "skill://d/pdf-processing/SKILL.md and 1 more; hosts tell such skills apart by path (ORG-10)"
    )


def test_changed_values_are_plain_json() -> None:
    old = spec_entry()
    new = spec_entry()
    new["frontmatter"]["metadata"] = {"k": ["v", {"x": 1.5}]}
    comparison = compare_entries(SkillEntry.from_json(old), SkillEntry.from_json(new))
    (added,) = comparison.frontmatter
    assert added.new == {"k": ("v", {"x": 1.5})}  # frozen in the value object
    document: Any = comparison.to_json()
    assert document["frontmatter"] == [
        {"pointer": "/metadata", "change": "added", "new": {"k": ["v", {"x": 1.5}]}}
    ]
    json.dumps(document, ensure_ascii=False).encode("utf-8")
