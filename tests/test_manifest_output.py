"""``manifest --json`` writes each entry exactly as ``json.dumps(entry.to_json())`` would.

``skills_core.cli.manifest`` makes each entry's JSON text from its parts (a frontmatter shared by
several skills is encoded once, straight from its frozen form) and encodes each item to UTF-8 on
its own; these tests hold it to the plain encoding, for any frontmatter, for entries with fields
of their own and for dynamic skills.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_helpers import Generated, skill_md

from skills_core.cli.manifest import (
    _encoded_entries,
    _json_document,
    _plain,
    _text,
    _warning_text,
    finding_json,
)
from skills_core.entry import SkillEntry, SkillResource
from skills_core.server import Catalog, PublishedSkill
from skills_core.validation import Finding, Severity

ENCODE = json.JSONEncoder(ensure_ascii=False, default=_plain).encode
DIGEST = "sha256:" + "0f" * 32

scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text()
json_values = st.recursive(
    scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


def plain_texts(catalog: Catalog) -> list[bytes]:
    return [
        json.dumps(skill.entry.to_json(), ensure_ascii=False).encode() for skill in catalog.skills
    ]


def published(entries: Sequence[SkillEntry]) -> Catalog:
    skills = [
        PublishedSkill(entry=entry, root=0, folder=entry.skill.skill_path) for entry in entries
    ]
    return Catalog(skills=tuple(sorted(skills, key=lambda s: s.uri)))


@settings(max_examples=150, deadline=None)
@given(
    extra=st.dictionaries(
        st.text().filter(lambda k: k not in ("name", "description")), json_values
    ),
    description=st.text(min_size=1),
    sizes=st.lists(st.integers(0, 2**53 - 1), min_size=0, max_size=3),
)
def test_entry_text_is_the_plain_encoding(
    extra: dict[str, Any], description: str, sizes: list[int]
) -> None:
    """Any frontmatter (non-BMP text, nesting, floats, null) and any sizes."""
    frontmatter = {"name": "a", "description": description, **extra}
    resources = [SkillResource(uri="skill://a/SKILL.md", digest=DIGEST, size=1)]
    resources += [
        SkillResource(
            uri=f"skill://a/f{n}", digest=f"sha256:{n:064x}" if size else EMPTY, size=size
        )
        for n, size in enumerate(sizes)
    ]
    shared = SkillEntry(uri="skill://a/SKILL.md", frontmatter=frontmatter, resources=resources)
    catalog = published([shared])
    assert list(_encoded_entries(catalog, ENCODE)) == plain_texts(catalog)


EMPTY = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_entries_with_fields_of_their_own_and_dynamic_entries() -> None:
    with_extra = SkillEntry.from_json(
        {
            "uri": "skill://b/SKILL.md",
            "frontmatter": {"name": "b", "description": "B", "x": [1.5, {"y": None}]},
            "resources": [
                {"uri": "skill://b/SKILL.md", "digest": DIGEST, "size": 3, "note": "é"},
            ],
            "vendor": {"z": True},
        }
    )
    resource_extra = SkillEntry.from_json(
        {
            "uri": "skill://c/SKILL.md",
            "frontmatter": {"name": "c", "description": "C"},
            "resources": [{"uri": "skill://c/SKILL.md", "digest": DIGEST, "size": 3, "k": 1}],
        }
    )
    catalog = Catalog.from_files(
        {
            "one/a/SKILL.md": skill_md("a", "😀 shared"),
            "two/a/SKILL.md": skill_md("a", "😀 shared"),  # the same frontmatter twice
            "two/a/x.md": b"x",
        },
        dynamic=[Generated("skill://gen/SKILL.md", {"SKILL.md": skill_md("gen", "G")})],
    )
    one, two = (catalog.get(f"skill://{n}/a/SKILL.md") for n in ("one", "two"))
    assert one is not None
    assert two is not None
    # equal, not one object: a catalog keeps each skill's entry as its JSON text, decoded on use
    assert one.entry.frontmatter == two.entry.frontmatter
    assert any(skill.is_dynamic for skill in catalog.skills)
    mixed = Catalog(
        skills=tuple(
            sorted(
                [*catalog.skills, *published([with_extra, resource_extra]).skills],
                key=lambda s: s.uri,
            )
        )
    )
    assert list(_encoded_entries(mixed, ENCODE)) == plain_texts(mixed)


def test_document_layout_with_a_character_outside_the_bmp() -> None:
    catalog = Catalog.from_files(
        {"a/SKILL.md": skill_md("a", "😀"), "b/SKILL.md": skill_md("b", "plain")}
    )
    text = b"".join(_json_document(catalog)).decode("utf-8")
    lines = text.splitlines()
    assert lines[:2] == ["{", '  "skills": [']
    assert lines[2].startswith("    {")
    assert lines[2].endswith("},")
    assert json.loads(lines[2][:-1]) == catalog.skills[0].entry.to_json()
    assert lines[4:] == [
        "  ],",
        '  "omitted": [],',
        '  "warnings": [],',
        '  "problems": [],',
        '  "skipped": []',
        "}",
    ]
    assert json.loads(text)["skills"] == catalog.manifest_json()


texts = st.text() | st.sampled_from(["", "\udcff", "a\udcfe\nb", "\u202e", "😀", '"\\'])


@settings(max_examples=200, deadline=None)
@given(
    uri=st.sampled_from(["skill://a/SKILL.md", "skill://a%20b/c/SKILL.md"]),
    severity=st.sampled_from(list(Severity)),
    field=texts,
    code=texts,
    message=texts,
    line=st.none() | st.integers(1, 10**6),
)
def test_warning_text_is_the_plain_encoding(  # noqa: PLR0917 - hypothesis gives them by name
    uri: str, severity: Severity, field: str, code: str, message: str, line: int | None
) -> None:
    """Names that are not UTF-8 (lone surrogates) shown as their bytes, as before."""
    finding = Finding(severity=severity, field=field, code=code, message=message, line=line)
    plain = {
        key: _text(value) if isinstance(value, str) else value
        for key, value in finding_json(finding).items()
    }
    text = _warning_text(uri, finding)
    assert text == json.dumps({"uri": uri, **plain}, ensure_ascii=False)
    text.encode("utf-8")  # strict UTF-8


def test_only_frozen_mappings_are_encoded_as_objects() -> None:
    with pytest.raises(TypeError, match="set is not JSON"):
        ENCODE({"a": {1}})
