"""A skill materialised on disk resolves its references as ``resources/read`` does (URI-26, WG-12).

The vector set is the reference tables of ``tests/test_uri.py`` (taken from their parametrize
marks, so both files test one set). For every reference the URI resolver accepts, the mount gives
the same file, both by the mapping (``mount_uri(resolve_in_mount(ref)) == resolve_reference(ref)``)
and on a real disk: the skill's files are written under a folder at their mount paths, and the
file the path names is the file whose URI the resolver gave. Every reference the URI resolver
refuses is refused in the mount too, with the same kind; for the escapes, the test shows that the
filesystem's own resolution would have left the folder or named another file, which is why a
mount never resolves by the filesystem's rules.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import test_uri
from hypothesis import given
from hypothesis import strategies as st

from skills_core import URIError, URIErrorKind, resolve_reference
from skills_core.mount import mount_path, mount_uri, resolve_directory_in_mount, resolve_in_mount
from skills_core.uri import percent_decode, resolve_directory_reference

REFUNDS = test_uri.REFUNDS
#: The skill the directory table of tests/test_uri.py resolves against.
PDF = "skill://pdf-processing/SKILL.md"


def _vectors(test: Any) -> list[Any]:
    [mark] = [m for m in test.pytestmark if m.name == "parametrize"]
    return list(mark.args[1])


GOOD: list[tuple[str, str, str]] = _vectors(test_uri.test_resolve_reference)
BAD: list[tuple[str, URIErrorKind]] = _vectors(test_uri.test_resolve_reference_refuses)
DIRECTORIES: list[tuple[str, str]] = _vectors(test_uri.test_resolve_directory_reference_DIR_02)


def test_the_vector_set_is_the_uri_tables() -> None:
    assert len(GOOD) >= 14
    assert len(BAD) >= 40
    assert len(DIRECTORIES) >= 9


@pytest.mark.parametrize(("base", "ref", "expected"), GOOD)
def test_a_reference_names_the_same_file_in_a_mount_URI_26(
    base: str, ref: str, expected: str
) -> None:
    path = resolve_in_mount(base, ref)
    assert mount_uri(base, path) == expected == resolve_reference(base, ref)
    assert mount_path(base, expected) == path
    assert not path.startswith("/")
    assert ".." not in path.split("/")


@pytest.mark.parametrize(("ref", "kind"), BAD)
def test_a_refused_reference_is_refused_in_a_mount_too_URI_26(ref: str, kind: URIErrorKind) -> None:
    with pytest.raises(URIError) as in_uri:
        resolve_reference(REFUNDS, ref)
    with pytest.raises(URIError) as in_mount:
        resolve_in_mount(REFUNDS, ref)
    assert in_uri.value.kind is in_mount.value.kind is kind


@pytest.mark.parametrize(("ref", "expected"), DIRECTORIES)
def test_a_directory_reference_names_the_same_folder_in_a_mount(ref: str, expected: str) -> None:
    path = resolve_directory_in_mount(PDF, ref)
    assert resolve_directory_reference(PDF, ref) == expected
    # the folder's URI is the URI of a file in it, less that file's name
    assert (
        mount_uri(PDF, path + "/x").removesuffix("/x") if path else PDF[: -len("/SKILL.md")]
    ) == expected


def _materialise(folder: Path, base: str, uris: list[str]) -> None:
    for uri in uris:
        target = folder / mount_path(base, uri)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(uri, encoding="utf-8")


def test_on_a_real_disk_the_mount_path_opens_the_file_the_uri_names_WG_12(tmp_path: Path) -> None:
    """Each skill of the table is written to disk at its mount paths; each reference's mount path
    opens the file holding the URI the resolver gave, and never anything outside the folder."""
    for base in sorted({base for base, _, _ in GOOD}):
        folder = tmp_path / str(abs(hash(base)))
        rows = [(ref, expected) for b, ref, expected in GOOD if b == base]
        _materialise(folder, base, sorted({expected for _, expected in rows}))
        for ref, expected in rows:
            target = (folder / resolve_in_mount(base, ref)).resolve()
            assert target.is_relative_to(folder.resolve())
            assert target.read_text(encoding="utf-8") == expected


def test_the_filesystems_own_rules_would_disagree_so_a_mount_never_uses_them(
    tmp_path: Path,
) -> None:
    """What ``os.path`` makes of the escapes, decoded as a markdown viewer would: above the folder,
    or another file. The mount refuses each (the test above); this is why."""
    folder = tmp_path / "mount" / "refunds"
    _materialise(folder, REFUNDS, [REFUNDS])
    (tmp_path / "mount" / "x.md").write_text("outside")
    for ref in ["../x.md", "%2e%2e/x.md", "%2E%2E/x.md", ".%2e/x.md", "a/../../x.md"]:
        on_disk = os.path.normpath(os.path.join(folder, percent_decode(ref)))
        assert not Path(on_disk).is_relative_to(folder), ref
        with pytest.raises(URIError):
            resolve_in_mount(REFUNDS, ref)


@pytest.mark.parametrize(
    "uri",
    [
        "skill://acme/billing/refunds/%41.md",  # 'A.md' spelt another way
        "skill://acme/billing/refunds/caf%c3%a9.md",  # lowercase hex
        "skill://acme/billing/refunds/%ff.md",  # not UTF-8
    ],
)
def test_a_uri_not_spelt_as_its_name_is_encoded_has_no_mount_path(uri: str) -> None:
    """Two spellings of one name are two URIs but would be one file: refused, never merged."""
    with pytest.raises(URIError) as caught:
        mount_path(REFUNDS, uri)
    assert caught.value.kind is URIErrorKind.BAD_ESCAPE


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("", URIErrorKind.EMPTY_SEGMENT),
        ("/etc/passwd", URIErrorKind.ABSOLUTE_PATH),
        ("a/../b.md", URIErrorKind.DOT_SEGMENT),
        ("a//b.md", URIErrorKind.EMPTY_SEGMENT),
        ("a\\b.md", URIErrorKind.BAD_CHARACTER),
        ("a\x00b.md", URIErrorKind.BAD_CHARACTER),
        ("a\u202eb.md", URIErrorKind.BAD_CHARACTER),
    ],
)
def test_a_path_no_skill_file_can_have_has_no_uri(path: str, kind: URIErrorKind) -> None:
    with pytest.raises(URIError) as caught:
        mount_uri(REFUNDS, path)
    assert caught.value.kind is kind


def test_a_uri_of_another_skill_has_no_mount_path() -> None:
    with pytest.raises(URIError) as caught:
        mount_path(REFUNDS, "skill://acme/billing/other/a.md")
    assert caught.value.kind is URIErrorKind.NOT_IN_SKILL


_NAME = st.text(
    st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"), blacklist_characters="/\\"),
    min_size=1,
    max_size=8,
).filter(lambda name: name not in (".", ".."))


@given(st.lists(st.one_of(_NAME, st.sampled_from([".", ".."])), min_size=1, max_size=6))
def test_any_reference_resolves_alike_or_fails_alike_URI_26(parts: list[str]) -> None:
    """References made of names, ``.`` and ``..`` (any Unicode a file name may hold): either both
    ways fail with the same kind, or the mount path maps back to the resolver's URI exactly."""
    ref = "/".join(parts)
    try:
        expected = resolve_reference(REFUNDS, ref)
    except URIError as exc:
        refused: URIErrorKind | None = exc.kind
    else:
        refused = None
    if refused is not None:
        with pytest.raises(URIError) as caught:
            resolve_in_mount(REFUNDS, ref)
        assert caught.value.kind is refused
        return
    path = resolve_in_mount(REFUNDS, ref)
    assert mount_uri(REFUNDS, path) == expected
    assert mount_path(REFUNDS, mount_uri(REFUNDS, path)) == path
