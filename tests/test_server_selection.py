"""What a filesystem source skips: hidden names, always-ignored names, exclude globs.

The rules are in ``skills_core.server.selection`` (pure), the walk, reads and directory reads
that apply them in ``skills_core.server.filesystem``. Every skipped entry is reported (the topmost
one), and is neither published nor readable nor listed; WG-09's refusal of links stays as it was.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest
from fs_helpers import spec_tree, write
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import KEY, Client, skill_md

from skills_core import SkillEntry
from skills_core import spec_examples as ex
from skills_core.server import (
    FilesystemSource,
    OmitCode,
    SkillsServer,
    SkipCode,
    SkippedEntry,
    server_from_roots,
)
from skills_core.server.selection import DEFAULT_IGNORED_NAMES, Selection, is_hidden

SKILL_URI = ex.SKILL_MD_URI


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return spec_tree(tmp_path / "root")


def uris(source: FilesystemSource) -> set[str]:
    (skill,) = source.scan().skills
    entry = skill.entry
    assert not isinstance(entry.resources, str)
    return {r.uri.removeprefix("skill://pdf-processing/") for r in entry.resources}


# --- what "hidden" means -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hidden"),
    [
        (".env", True),
        (".git", True),
        (".notes.md.swp", True),  # Vim's swap file
        (".#notes.md", True),  # Emacs's lock
        ("notes.md~", True),  # Emacs, gedit, Kate backups
        ("#notes.md#", True),  # Emacs's autosave
        ("#", False),
        ("#notes.md", False),
        ("notes#", False),
        ("notes.md", False),
        ("a.b", False),
        ("__pycache__", False),  # always ignored, but not "hidden"
    ],
)
def test_what_hidden_means(name: str, hidden: bool) -> None:
    assert is_hidden(name) is hidden


def test_ignored_beats_hidden_beats_excluded() -> None:
    selection = Selection(exclude=["*"])
    assert selection.skip("", ".git", True) is SkipCode.IGNORED
    assert selection.skip("", ".env", False) is SkipCode.HIDDEN
    assert selection.skip("", "x", False) is SkipCode.EXCLUDED
    assert Selection(include_hidden=True).skip("", ".git", True) is SkipCode.IGNORED
    assert Selection(include_hidden=True).skip("", ".env", False) is None
    assert Selection(ignore=()).skip("", "__pycache__", True) is None
    assert set(DEFAULT_IGNORED_NAMES) == {".git", ".hg", ".svn", "__pycache__", ".DS_Store"}


# --- how globs match -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "matches"),
    [
        ("*.log", "run.log", False, True),
        ("*.log", "a/b/run.log", False, True),  # no '/': a name at any depth
        ("*.log", "a/run.log/x", False, False),  # only the last name is tested here
        ("drafts/*.md", "drafts/a.md", False, True),
        ("drafts/*.md", "x/drafts/a.md", False, False),  # a '/': the whole path from the root
        ("drafts/*.md", "drafts/sub/a.md", False, False),  # '*' never crosses '/'
        ("/notes.md", "notes.md", False, True),
        ("/notes.md", "a/notes.md", False, False),
        ("**/tmp", "tmp", True, True),
        ("**/tmp", "a/b/tmp", True, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("a/**/b", "ab", False, False),
        ("x/**", "x/y", False, True),
        ("x/**", "x", True, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # a trailing '/': folders only
        ("?.md", "a.md", False, True),
        ("?.md", "ab.md", False, False),
        ("[ab].md", "b.md", False, True),
        ("[!ab].md", "c.md", False, True),
        ("[!ab].md", "a.md", False, False),
        ("[a-c]*", "bee", False, True),
        ("[]]x", "]x", False, True),
        ("[*]", "*", False, True),  # no escape character: a set makes '*' literal
        ("[*]", "a", False, False),
        ("[x", "[x", False, True),  # an unclosed '[' is literal
        ("a**b", "aXYb", False, True),  # '**' inside a name is '*'
        ("*", ".env", False, True),  # '*' matches a leading dot
        ("NOTES", "notes", False, False),  # case-sensitive
        ("a.b", "aXb", False, False),  # '.' is literal
        ("[&&]", "&", False, True),  # characters special in Python sets are literal here
        ("a[--0]b", "a/b", False, False),  # a range spanning '/' still never matches it
        ("a[--0]b", "a.b", False, True),
    ],
)
def test_how_globs_match(pattern: str, path: str, is_dir: bool, matches: bool) -> None:
    folder, _, name = path.rpartition("/")
    code = Selection(include_hidden=True, exclude=[pattern]).skip(folder, name, is_dir)
    assert (code is SkipCode.EXCLUDED) is matches


@pytest.mark.parametrize("pattern", ["", "/", "//", "[z-a]"])
def test_bad_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="exclude pattern"):
        Selection(exclude=[pattern])


_NAME = st.text(alphabet="ab.*?[]!-", min_size=1, max_size=4)
_PLAIN = st.text(alphabet="ab.-!]", min_size=1, max_size=4)


def _oracle(pattern: list[str], path: list[str]) -> bool:
    """Segment-wise fnmatch, '**' as any number of whole names (the documented meaning): none
    included, except at the end, where it is everything inside (one name at least)."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_oracle(rest, path[i:]) for i in range(0 if rest else 1, len(path) + 1))
    if not path:
        return False
    segment = re.sub(r"\*+", "*", head)
    return fnmatch.fnmatchcase(path[0], segment) and _oracle(rest, path[1:])


@given(
    pattern=st.lists(st.one_of(_NAME, st.just("**")), min_size=2, max_size=4),
    path=st.lists(_PLAIN, min_size=1, max_size=4),
)
def test_path_globs_agree_with_a_segment_wise_fnmatch(pattern: list[str], path: list[str]) -> None:
    """A pattern with '/' matches exactly when each name matches its glob segment, in order."""
    if any(segment != "**" and "[" in segment for segment in pattern):
        return  # fnmatch reads a set differently at its edges ('[!]' and friends); tested above
    expected = _oracle(pattern, path)
    selection = Selection(include_hidden=True, ignore=(), exclude=["/".join(pattern)])
    code = selection.skip("/".join(path[:-1]), path[-1], False)
    assert (code is SkipCode.EXCLUDED) is expected


@given(
    name=st.text(alphabet="ab.*?-", min_size=1, max_size=6),
    folders_only=st.booleans(),
    path=st.lists(_PLAIN, max_size=3),
    is_dir=st.booleans(),
)
def test_name_globs_match_the_last_name_only(
    name: str, folders_only: bool, path: list[str], is_dir: bool
) -> None:
    """A pattern with no '/' is fnmatch on the name at any depth; a trailing '/' wants a folder."""
    selection = Selection(include_hidden=True, ignore=(), exclude=[name + "/" * folders_only])
    code = selection.skip("/".join(path), "last.x", is_dir)
    expected = fnmatch.fnmatchcase("last.x", name) and (is_dir or not folders_only)
    assert (code is SkipCode.EXCLUDED) is expected


def test_skips_path_judges_every_folder_above() -> None:
    selection = Selection(exclude=["drafts/"])
    assert selection.skips_path("a/drafts/x.md", False)
    assert selection.skips_path("a/.cache/x.md", False)
    assert not selection.skips_path("a/drafts", False)  # a file named drafts: folders only
    assert selection.skips_path("a/drafts", True)
    assert not selection.skips_path("", True)


def test_the_reason_names_the_rule_and_the_pattern() -> None:
    selection = Selection(exclude=["*.log", "tmp/"])
    assert "pattern '*.log'" in selection.reason(SkipCode.EXCLUDED, "a", "x.log", False)
    assert "pattern 'tmp/'" in selection.reason(SkipCode.EXCLUDED, "", "tmp", True)
    assert "hidden" in selection.reason(SkipCode.HIDDEN, "", ".env", False)
    assert "always" in selection.reason(SkipCode.IGNORED, "", ".git", True)


# --- the source: published, readable, listed, reported -------------------------------------------


def test_hidden_files_are_not_published_by_default(root: Path) -> None:
    write(
        root,
        {
            "pdf-processing/.env": b"TOKEN=secret\n",
            "pdf-processing/templates/.invoice.md.swp": b"\0",
            "pdf-processing/templates/invoice.md~": b"old",
            "pdf-processing/#notes.md#": b"autosave",
            "pdf-processing/.vscode/settings.json": b"{}",
        },
    )
    source = FilesystemSource([root])
    assert uris(source) == {"SKILL.md", "templates/invoice.md", "templates/purchase-order.md"}
    skipped = source.scan().skipped
    assert {(s.path, s.code) for s in skipped} == {
        ("pdf-processing/.env", SkipCode.HIDDEN),
        ("pdf-processing/templates/.invoice.md.swp", SkipCode.HIDDEN),
        ("pdf-processing/templates/invoice.md~", SkipCode.HIDDEN),
        ("pdf-processing/#notes.md#", SkipCode.HIDDEN),
        ("pdf-processing/.vscode", SkipCode.HIDDEN),  # the folder, not what is in it
    }
    assert all(isinstance(s, SkippedEntry) and s.root == 0 for s in skipped)


def test_hidden_files_are_neither_readable_nor_listed(root: Path) -> None:
    write(root, {"pdf-processing/.env": b"TOKEN=secret\n", "pdf-processing/.d/x.md": b"x"})
    c = Client(server_from_roots([root], cursor_key=KEY))
    for uri in ("skill://pdf-processing/.env", "skill://pdf-processing/.d/x.md"):
        assert c.error("resources/read", {"uri": uri})["code"] == -32602
    assert c.error("resources/directory/read", {"uri": "skill://pdf-processing/.d"})["code"] == (
        -32602
    )
    children = c.call("resources/directory/read", {"uri": "skill://pdf-processing"})["resources"]
    assert [r["uri"] for r in children] == [SKILL_URI, "skill://pdf-processing/templates"]
    got = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert all(".env" not in r.uri for r in got.resources)  # type: ignore[union-attr]


def test_include_hidden_publishes_them_but_never_vcs_metadata(root: Path) -> None:
    write(
        root,
        {
            "pdf-processing/.env": b"TOKEN=x\n",
            "pdf-processing/.git/config": b"[core]",
            "pdf-processing/notes.md~": b"old",
        },
    )
    source = FilesystemSource([root], include_hidden=True)
    assert {".env", "notes.md~"} <= uris(source)
    assert not any(".git" in u for u in uris(source))
    assert [(s.path, s.code) for s in source.scan().skipped] == [
        ("pdf-processing/.git", SkipCode.IGNORED)
    ]
    c = Client(server_from_roots([root], cursor_key=KEY))
    assert c.error("resources/read", {"uri": "skill://pdf-processing/.env"})["code"] == -32602


def test_a_hidden_folder_of_skills_is_reported_and_can_be_served_as_a_root(tmp_path: Path) -> None:
    """``.claude/skills`` under a repository: skipped as hidden, served when it is the root."""
    write(tmp_path, {".claude/skills/helper/SKILL.md": skill_md("helper")})
    catalog = FilesystemSource([tmp_path]).scan()
    assert catalog.skills == ()
    assert [(s.path, s.code) for s in catalog.skipped] == [(".claude", SkipCode.HIDDEN)]
    served = FilesystemSource([tmp_path / ".claude/skills"]).scan()
    assert [s.uri for s in served.skills] == ["skill://helper/SKILL.md"]
    assert [s.uri for s in FilesystemSource([tmp_path], include_hidden=True).scan().skills] == [
        "skill://.claude/skills/helper/SKILL.md"
    ]


def test_exclude_patterns_skip_files_and_folders(root: Path) -> None:
    write(
        root,
        {
            "pdf-processing/drafts/a.md": b"a",
            "pdf-processing/run.log": b"l",
            "pdf-processing/templates/old.log": b"l",
            "pdf-processing/templates/keep.md": b"k",
        },
    )
    source = FilesystemSource([root], exclude=["*.log", "pdf-processing/drafts/"])
    assert uris(source) == {
        "SKILL.md",
        "templates/invoice.md",
        "templates/purchase-order.md",
        "templates/keep.md",
    }
    skipped = {s.path: s.reason for s in source.scan().skipped}
    assert skipped == {
        "pdf-processing/drafts": "excluded by the pattern 'pdf-processing/drafts/'",
        "pdf-processing/run.log": "excluded by the pattern '*.log'",
        "pdf-processing/templates/old.log": "excluded by the pattern '*.log'",
    }
    c = Client(SkillsServer(source, cursor_key=KEY))
    assert c.error("resources/read", {"uri": "skill://pdf-processing/run.log"})["code"] == -32602
    assert (
        c.error("resources/read", {"uri": "skill://pdf-processing/drafts/a.md"})["code"] == -32602
    )
    listed = c.call("resources/directory/read", {"uri": "skill://pdf-processing/templates"})
    assert [r["name"] for r in listed["resources"]] == [
        "invoice.md",
        "keep.md",
        "purchase-order.md",
    ]


def test_an_excluded_skill_md_means_no_skill(root: Path) -> None:
    source = FilesystemSource([root], exclude=["pdf-processing/SKILL.md"])
    assert source.scan().skills == ()
    assert source.recheck(SKILL_URI) is None


def test_excluding_a_skill_folder_removes_the_skill(root: Path) -> None:
    write(root, {"other/SKILL.md": skill_md("other")})
    catalog = FilesystemSource([root], exclude=["other"]).scan()
    assert [s.uri for s in catalog.skills] == [SKILL_URI]
    assert catalog.omitted == ()
    assert [s.path for s in catalog.skipped] == ["other"]


def test_a_skipped_symlink_is_reported_as_skipped_not_refused(root: Path, tmp_path: Path) -> None:
    (root / "pdf-processing/.env").symlink_to(tmp_path)
    catalog = FilesystemSource([root]).scan()
    assert catalog.problems == ()
    assert [(s.path, s.code) for s in catalog.skipped] == [("pdf-processing/.env", SkipCode.HIDDEN)]
    (root / "pdf-processing/link.md").symlink_to(tmp_path)
    assert [p.path for p in FilesystemSource([root]).scan().problems] == ["pdf-processing/link.md"]


def test_excluded_nested_skill_is_not_published(root: Path) -> None:
    write(root, {"pdf-processing/sub/SKILL.md": skill_md("sub")})
    catalog = FilesystemSource([root], exclude=["sub/"]).scan()
    assert [s.uri for s in catalog.skills] == [SKILL_URI]
    assert all(o.code is not OmitCode.URI_COLLISION for o in catalog.omitted)
