"""Where each frontmatter member sits: ``parse_frontmatter(..., locate=True)`` and the findings of
``validate_skill_md`` placed at their line and column."""

from __future__ import annotations

import pytest
from frontmatter_helpers import corpus_files, fm
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core.errors import FrontmatterError
from skills_core.frontmatter import FieldLocation, parse_frontmatter
from skills_core.validation import Severity, lint_portability, validate_skill_md


def spots(skill_md: str | bytes) -> dict[str, tuple[int, int, int, int]]:
    parsed = parse_frontmatter(skill_md, locate=True)
    return {
        pointer: (where.line, where.column, where.value_line, where.value_column)
        for pointer, where in parsed.locations.items()
    }


def test_locations_are_opt_in() -> None:
    doc = fm("name: pdf\ndescription: d\n")
    assert parse_frontmatter(doc).locations == {}
    located = parse_frontmatter(doc, locate=True)
    assert located.data == parse_frontmatter(doc).data
    assert located.locations["/name"] == FieldLocation(
        line=2, column=1, value_line=2, value_column=7
    )


def test_every_kind_of_member_is_located() -> None:
    doc = fm(
        "name: pdf\n"  # 2
        "description: >\n"  # 3
        "  folded\n"  # 4
        "metadata:\n"  # 5
        "  author: me\n"  # 6
        "  'a/b': \"x\"\n"  # 7
        "allowed-tools: [Read, {k: v}]\n"  # 8
        "list:\n"  # 9
        "  - a\n"  # 10
        "  -\n"  # 11
        "  - b: c\n"  # 12
        "empty:\n"  # 13
        "flow: {a, b: 1}\n"  # 14
        "same:\n"  # 15
        "- x\n"  # 16
        '"quoted key": |\n'  # 17
        "  text\n"  # 18
    )
    assert spots(doc) == {
        "/name": (2, 1, 2, 7),
        "/description": (3, 1, 3, 14),
        "/metadata": (5, 1, 6, 3),
        "/metadata/author": (6, 3, 6, 11),
        "/metadata/a~1b": (7, 3, 7, 10),
        "/allowed-tools": (8, 1, 8, 16),
        "/allowed-tools/0": (8, 17, 8, 17),
        "/allowed-tools/1": (8, 23, 8, 23),
        "/allowed-tools/1/k": (8, 24, 8, 27),
        "/list": (9, 1, 10, 3),
        "/list/0": (10, 5, 10, 5),
        "/list/1": (11, 3, 11, 3),  # an empty item sits at its "-"
        "/list/2": (12, 5, 12, 5),
        "/list/2/b": (12, 5, 12, 8),
        "/empty": (13, 1, 13, 1),  # no value: at the key
        "/flow": (14, 1, 14, 7),
        "/flow/a": (14, 8, 14, 8),
        "/flow/b": (14, 11, 14, 14),
        "/same": (15, 1, 16, 1),
        "/same/0": (16, 3, 16, 3),
        "/quoted key": (17, 1, 17, 15),
    }
    assert list(spots(doc)) == sorted(spots(doc), key=lambda p: spots(doc)[p][:2])


def test_locations_are_the_files_own_with_crlf_and_a_byte_order_mark() -> None:
    raw = b"\xef\xbb\xbf---\r\nmeta: {\xc3\xa9: \xc3\xa9, k: v}\r\ndescription:  d\r\n---\r\n"
    assert spots(raw) == {
        "/meta": (2, 1, 2, 7),
        "/meta/\u00e9": (2, 8, 2, 11),  # columns count characters, not bytes
        "/meta/k": (2, 14, 2, 17),
        "/description": (3, 1, 3, 15),
    }


def test_a_multi_line_top_level_flow_mapping_is_located() -> None:
    doc = fm('{name: x,\n  "description": "y"}\n')
    assert spots(doc) == {"/name": (2, 2, 2, 8), "/description": (3, 3, 3, 18)}


# --- hypothesis: the renderer knows where it put every key and value ------------------------

KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
WORDS = st.from_regex(r"[a-z][a-z0-9]{0,6}( [a-z0-9]{1,5}){0,2}", fullmatch=True)


@st.composite
def rendered_value(draw: st.DrawFn, indent: int) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """Lines of a value (the first one goes after ``key: `` unless it is empty) and, relative to
    the first line, the (line offset, column) of each item it holds."""
    kind = draw(st.sampled_from(["plain", "dq", "sq", "int", "flow", "block-list", "map", "lit"]))
    pad = " " * (indent + 2)
    if kind == "plain":
        return [draw(WORDS)], {}
    if kind == "dq":
        return [f'"{draw(WORDS)}"'], {}
    if kind == "sq":
        return [f"'{draw(WORDS)}'"], {}
    if kind == "int":
        return [str(draw(st.integers(0, 10**6)))], {}
    if kind == "flow":
        words = draw(st.lists(WORDS, min_size=1, max_size=3))
        items: dict[str, tuple[int, int]] = {}
        col = 1
        for index, word in enumerate(words):
            items[f"/{index}"] = (0, col)
            col += len(word) + 2
        return ["[" + ", ".join(words) + "]"], {k: (0, c + 1) for k, (_, c) in items.items()}
    if kind == "lit":
        return ["|", *[pad + draw(WORDS) for _ in range(draw(st.integers(1, 3)))]], {}
    if kind == "block-list":
        words = draw(st.lists(WORDS, min_size=1, max_size=3))
        lines = [""] + [f"{pad}- {word}" for word in words]
        return lines, {f"/{k}": (k + 1, indent + 5) for k in range(len(words))}
    keys = draw(st.lists(KEYS, min_size=1, max_size=3, unique=True))
    lines = [""]
    items = {}
    for key in keys:
        word = draw(WORDS)
        items[f"/{key}"] = (len(lines), indent + 3)
        items[f"/{key}:value"] = (len(lines), indent + 3 + len(key) + 2)
        lines.append(f"{pad}{key}: {word}")
    return lines, items


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, tuple[int, int, int, int]]]:
    keys = draw(st.lists(KEYS, min_size=1, max_size=6, unique=True))
    lines: list[str] = []
    expected: dict[str, tuple[int, int, int, int]] = {}
    for key in keys:
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# a comment", "   "])))
        value, items = draw(rendered_value(0))
        line = len(lines) + 2  # SKILL.md line of this key
        gap = draw(st.sampled_from([" ", "  "]))
        if value[0]:
            lines.append(f"{key}:{gap}{value[0]}")
            value_at = (line, len(key) + 1 + len(gap) + 1)
        else:
            lines.append(f"{key}:")
            first = value[1]
            value_at = (line + 1, len(first) - len(first.lstrip(" ")) + 1)
        lines.extend(value[1:])
        expected[f"/{key}"] = (line, 1, *value_at)
        for pointer, (offset, column) in items.items():
            if pointer.endswith(":value"):
                continue
            where = (line + offset, column)
            value_column = items.get(pointer + ":value", (offset, column))[1]
            if pointer.count("/") == 1 and value[0] and value[0][0] == "[":
                where = (line, value_at[1] + column - 1)
                value_column = where[1]
            expected[f"/{key}{pointer}"] = (*where, where[0], value_column)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return "---" + eol + "".join(line + eol for line in lines) + "---" + eol, expected


@settings(max_examples=300, deadline=None)
@given(documents())
def test_locations_match_where_the_text_was_written(
    document: tuple[str, dict[str, tuple[int, int, int, int]]],
) -> None:
    text, expected = document
    assert spots(text) == expected
    assert spots(text.encode()) == expected
    plain = parse_frontmatter(text)
    assert parse_frontmatter(text, locate=True).data == plain.data


def test_top_level_keys_of_the_corpus_point_at_their_text() -> None:
    files = corpus_files()
    if not files:
        pytest.skip("the shared corpus (../shared/corpus) is not beside this checkout")
    located = 0
    for path in files:
        raw = path.read_bytes()
        try:
            plain = parse_frontmatter(raw)
        except FrontmatterError:
            continue
        parsed = parse_frontmatter(raw, locate=True)
        assert parsed.data == plain.data, path
        lines = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for key in plain.data:
            pointer = "/" + key.replace("~", "~0").replace("/", "~1")
            where = parsed.locations[pointer]
            text = lines[where.line - 1][where.column - 1 :]
            assert text.startswith((key, f'"{key}', f"'{key}")), (path, key, text)
            located += 1
    assert located > 10_000


# --- findings placed in SKILL.md ------------------------------------------------------------------


def test_rule_findings_sit_at_their_value_or_their_key() -> None:
    doc = fm(
        "name: Bad_Name\n"  # 2
        "description: ''\n"  # 3
        "metadata:\n"  # 4
        "  io.modelcontextprotocol/x: a\n"  # 5
        "  count: 5\n"  # 6
        "allowed-tools:\n"  # 7
        "  - Read\n"  # 8
        "created: 2025-10-20\n"  # 9
    )
    placed = {
        (f.code, f.field): (f.file, f.line, f.column)
        for f in validate_skill_md(doc, directory_name="x")
    }
    assert placed == {
        ("name-invalid", "/name"): ("SKILL.md", 2, 7),
        ("description-empty", "/description"): ("SKILL.md", 3, 14),
        ("metadata-reserved-key", "/metadata/io.modelcontextprotocol~1x"): ("SKILL.md", 5, 3),
        ("metadata-value-not-string", "/metadata/count"): ("SKILL.md", 6, 10),
        ("allowed-tools-not-string", "/allowed-tools"): ("SKILL.md", 8, 3),
        ("portability-date", "/created"): ("SKILL.md", 9, 10),
    }


def test_a_missing_field_has_no_place_but_its_file() -> None:
    (only,) = validate_skill_md(fm("name: x\n"), directory_name="x")
    assert (only.code, only.file, only.line, only.column) == (
        "description-missing",
        "SKILL.md",
        None,
        None,
    )
    assert only.place == "SKILL.md"


def test_parse_errors_and_key_lint_are_placed() -> None:
    (only,) = validate_skill_md(fm("name: x\ndescription: d\nname: y\n"))
    assert (only.code, only.file, only.line, only.column) == (
        "frontmatter-duplicate-key",
        "SKILL.md",
        4,
        1,
    )
    assert not only.message.startswith("frontmatter line")  # the place is in the fields
    assert only.place == "SKILL.md:4:1"
    (key,) = lint_portability(fm("name: x\ndescription: d\nmeta:\n  yes: 1\n"))
    assert (key.code, key.severity, key.line, key.column) == (
        "portability-key",
        Severity.WARNING,
        5,
        3,
    )


def test_finding_json_is_strict_utf8_with_the_raw_name_beside_it() -> None:
    (only,) = validate_skill_md(fm("name: x\n"), directory_name="x")
    assert only.to_json() == {
        "severity": "error",
        "code": "description-missing",
        "field": "/description",
        "message": "the required field 'description' is missing",
        "file": "SKILL.md",
    }
    name = b"bad\xffname\n.md".decode("utf-8", "surrogateescape")
    odd = type(only)(
        severity=Severity.WARNING, field="", code="symlink", message=f"{name}: x", file=name
    )
    out = odd.to_json()
    assert out["file"] == "bad\\udcffname\n.md"
    assert bytes.fromhex(str(out["file_hex"])) == b"bad\xffname\n.md"
    assert out["message"] == "bad\\udcffname\n.md: x"
    assert (
        "file_hex"
        not in type(only)(
            severity=Severity.WARNING, field="", code="c", message="m", file="caf\u00e9"
        ).to_json()
    )


#: Each rule of validate_skill_md, a frontmatter that breaks it (after "---" on line 1), and
#: where its finding sits: (line, column), or None for a field that is not there.
RULE_PLACES = [
    ("name-missing", "description: d\n", None),
    ("name-not-string", "name: 5\ndescription: d\n", (2, 7)),
    ("name-not-string", "name:\ndescription: d\n", (2, 1)),  # no value: at the key
    ("name-invalid", "description: d\nname:   Bad\n", (3, 9)),
    ("name-mismatch", "name: other\ndescription: d\n", (2, 7)),
    ("description-missing", "name: x\n", None),
    ("description-not-string", "name: x\ndescription: [a]\n", (3, 14)),
    ("description-empty", "name: x\ndescription: ''\n", (3, 14)),
    ("description-too-long", "name: x\ndescription: >\n  " + "y" * 1025 + "\n", (3, 14)),
    ("compatibility-not-string", "name: x\ndescription: d\ncompatibility: 3\n", (4, 16)),
    ("compatibility-empty", 'name: x\ndescription: d\ncompatibility: ""\n', (4, 16)),
    ("compatibility-too-long", f"name: x\ndescription: d\ncompatibility: {'c' * 501}\n", (4, 16)),
    ("metadata-not-mapping", "name: x\ndescription: d\nmetadata: [a]\n", (4, 11)),
    ("metadata-value-not-string", "name: x\ndescription: d\nmetadata:\n  a:\n    b: c\n", (6, 5)),
    (
        "metadata-reserved-key",
        "name: x\ndescription: d\nmetadata: {io.modelcontextprotocol/a: b}\n",
        (4, 12),
    ),
    ("license-not-string", "name: x\ndescription: d\nlicense: {}\n", (4, 10)),
    ("allowed-tools-not-string", "name: x\ndescription: d\nallowed-tools: 1\n", (4, 16)),
    ("allowed-tools-commas", "name: x\ndescription: d\nallowed-tools: Read, Grep\n", (4, 16)),
    ("portability-bool", "name: x\ndescription: d\nflag: yes\n", (4, 7)),
    ("portability-number", "name: x\ndescription: d\nlist:\n  - 017\n", (5, 5)),
    ("portability-number-text", "name: x\ndescription: d\nversion: [1.0]\n", (4, 11)),
    ("portability-special", "name: x\ndescription: d\nv: =\n", (4, 4)),
    ("portability-key", "name: x\ndescription: d\nm: {on: 1}\n", (4, 5)),
    ("frontmatter-syntax", "name: x\ndescription: a: b\n", (3, 15)),
    ("frontmatter-unsupported", "name: &a x\ndescription: d\n", (2, 7)),
    ("frontmatter-duplicate-key", "name: x\ndescription: d\nname: y\n", (4, 1)),
    ("frontmatter-schema", "- a\n", (2, 1)),
    ("frontmatter-limit", "name: x\ndescription: d\n" + "k" * 1025 + ": v\n", (4, 1)),
]


@pytest.mark.parametrize(
    ("code", "yaml_text", "place"), RULE_PLACES, ids=[r[0] for r in RULE_PLACES]
)
def test_each_rule_places_its_finding(
    code: str, yaml_text: str, place: tuple[int, int] | None
) -> None:
    found = [f for f in validate_skill_md(fm(yaml_text), directory_name="x") if f.code == code]
    assert len(found) == 1, validate_skill_md(fm(yaml_text), directory_name="x")
    (only,) = found
    assert only.file == "SKILL.md"
    assert ((only.line, only.column) if only.line is not None else None) == place
    # The same rule in a CRLF file is placed on the same line and column.
    crlf = fm(yaml_text).replace("\n", "\r\n").encode()
    (again,) = [f for f in validate_skill_md(crlf, directory_name="x") if f.code == code]
    assert (again.line, again.column) == (only.line, only.column)
