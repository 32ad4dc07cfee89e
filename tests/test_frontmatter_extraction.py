"""Extracting the frontmatter from SKILL.md bytes (SIL-10, FMT-03, VER-10)."""

from __future__ import annotations

import hashlib

import pytest

from skills_core.errors import FrontmatterError
from skills_core.frontmatter import DEFAULT_MAX_BYTES, parse_frontmatter, split_frontmatter

#: The spec's V1 vector (docs/requirements.md#spec-test-vectors): 151 bytes.
V1 = (
    b"---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n"
    b"# PDF processing\n\nChoose the matching template from `templates/`.\n"
)
V1_DATA = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}


def test_spec_vector_v1_parses_to_the_entry_frontmatter() -> None:
    """VER-10: the SPEC SKILL.md vector parses to exactly the entry's frontmatter."""
    assert len(V1) == 151
    assert hashlib.sha256(V1).hexdigest() == (
        "99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e"
    )
    parsed = parse_frontmatter(V1)
    assert parsed.data == V1_DATA
    assert parsed.yaml_text == V1[4:80].decode()
    assert (parsed.first_line, parsed.last_line, parsed.closing_line) == (2, 3, 4)
    assert V1[parsed.body_byte_offset :].startswith(b"\n# PDF processing")
    assert parsed.body_offset == parsed.body_byte_offset == 84
    assert not parsed.has_bom


def test_str_and_bytes_inputs_agree() -> None:
    assert parse_frontmatter(V1) == parse_frontmatter(V1.decode())


def test_crlf_line_breaks() -> None:
    """SIL-10: CRLF is a line break; the YAML text has LF only; offsets index the original."""
    crlf = V1.replace(b"\n", b"\r\n")
    parsed = parse_frontmatter(crlf)
    assert parsed.data == V1_DATA
    assert "\r" not in parsed.yaml_text
    assert crlf[parsed.body_byte_offset :].startswith(b"\r\n# PDF processing")
    assert parsed.closing_line == 4


def test_lone_cr_line_breaks() -> None:
    cr = V1.replace(b"\n", b"\r")
    parsed = parse_frontmatter(cr)
    assert parsed.data == V1_DATA
    assert cr[parsed.body_byte_offset :].startswith(b"\r# PDF processing")


def test_mixed_line_breaks() -> None:
    doc = b"---\r\nname: a\rdescription: |\r\n  x\r  y\n---\rbody"
    parsed = parse_frontmatter(doc)
    assert parsed.data == {"name": "a", "description": "x\ny\n"}
    assert doc[parsed.body_byte_offset :] == b"body"


def test_dashes_starting_a_line_do_not_close() -> None:
    for doc in (b"---\rname: x\r---x: 1\r---\rbody", b"---\nname: x\n---x: 1\n---\nbody"):
        parsed = parse_frontmatter(doc)
        assert parsed.data == {"name": "x", "---x": 1}
        assert doc[parsed.body_byte_offset :] == b"body"


def test_crlf_inside_a_block_scalar_becomes_lf() -> None:
    doc = b"---\r\na: |\r\n  one\r\n  two\r\n---\r\n"
    assert parse_frontmatter(doc).data == {"a": "one\ntwo\n"}


def test_bom_is_skipped_for_parsing_only() -> None:
    """SIL-10: a leading BOM is stripped for parsing; the byte offset still counts it."""
    with_bom = b"\xef\xbb\xbf" + V1
    assert len(with_bom) == 154
    parsed = parse_frontmatter(with_bom)
    assert parsed.data == V1_DATA
    assert parsed.has_bom
    assert parsed.body_offset == 84
    assert parsed.body_byte_offset == 87
    assert with_bom[parsed.body_byte_offset :].startswith(b"\n# PDF")
    assert parse_frontmatter("\ufeff" + V1.decode()) == parsed


def test_only_one_bom_is_skipped() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"\xef\xbb\xbf\xef\xbb\xbf" + V1)
    assert (info.value.kind, info.value.line) == ("delimiter", 1)


def test_body_byte_offset_counts_multibyte_characters() -> None:
    doc = "---\nname: café\ndescription: 📹\n---\nbody é"
    parsed = parse_frontmatter(doc.encode())
    assert doc.encode()[parsed.body_byte_offset :] == "body é".encode()
    assert doc[parsed.body_offset :] == "body é"


def test_frontmatter_closed_at_end_of_file() -> None:
    parsed = parse_frontmatter(b"---\nname: x\n---")
    assert parsed.data == {"name": "x"}
    assert parsed.body_offset == len("---\nname: x\n---")
    assert parse_frontmatter(b"---\r\nname: x\r\n---").data == {"name": "x"}


def test_the_first_exact_delimiter_line_closes() -> None:
    doc = b"---\nname: x\ndescription: a --- b\n--- \n----\n---\nlater: 1\n---\n"
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc)
    # "--- " (trailing space) does not close; it is a second YAML document start.
    assert (info.value.kind, info.value.line) == ("unsupported", 4)


def test_description_containing_dashes_is_not_a_delimiter() -> None:
    doc = b"---\nname: x\ndescription: a --- b\n---\n"
    assert parse_frontmatter(doc).data == {"name": "x", "description": "a --- b"}


def test_delimiter_with_trailing_space_does_not_close() -> None:
    """SIL-10: a ``"--- \\n"`` delimiter is not a closing line."""
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"---\nname: x\n--- \nbody\n")
    assert (info.value.kind, info.value.line) == ("delimiter", 1)
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"---\nname: x\n--- \n---\nbody\n")
    assert (info.value.kind, info.value.line) == ("unsupported", 3)
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"--- \nname: x\n---\n")
    assert (info.value.kind, info.value.line) == ("delimiter", 1)


@pytest.mark.parametrize(
    "doc",
    [
        b"# title\n",
        b"",
        b"\n---\nname: x\n---\n",
        b"----\nname: x\n---\n",
        b"name: x\n---\n",
        b" ---\nname: x\n---\n",
    ],
)
def test_missing_opening_delimiter(doc: bytes) -> None:
    """FMT-03: SKILL.md begins with YAML frontmatter."""
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc)
    assert (info.value.kind, info.value.line) == ("delimiter", 1)
    assert "must start with a '---' line" in info.value.reason


@pytest.mark.parametrize(
    "doc", [b"---", b"---\n", b"---\nname: x\n", b"---\r\nname: x\r\n-- -\r\n"]
)
def test_missing_closing_delimiter(doc: bytes) -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc)
    assert (info.value.kind, info.value.line) == ("delimiter", 1)
    assert "never closed" in info.value.reason


def test_empty_frontmatter_is_an_error() -> None:
    for doc in (b"---\n---\n", b"---\r\n---\r\n", b"---\r---", b"---\n\n# c\n---\n"):
        with pytest.raises(FrontmatterError) as info:
            parse_frontmatter(doc)
        assert (info.value.kind, info.value.line) == ("schema", 2)


def test_invalid_utf8_names_the_line() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"---\nname: x\ndescription: caf\xe9\n---\n")
    err = info.value
    assert (err.kind, err.line, err.column) == ("encoding", 3, 17)
    assert "0xE9" in err.reason
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"---\r\na: 1\r\n\r\nb: \xc3\r\n---\nbody")
    assert (info.value.kind, info.value.line, info.value.column) == ("encoding", 4, 4)
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"\xff---\n")
    assert (info.value.kind, info.value.line) == ("delimiter", 1)
    assert "'\\\\xff---'" in info.value.reason


def test_the_body_is_not_decoded() -> None:
    """Only the frontmatter (through the closing line) must be UTF-8; the body is the caller's."""
    doc = b"---\nname: x\n---\nbody \xc3"
    parsed = parse_frontmatter(doc)
    assert parsed.data == {"name": "x"}
    assert doc[parsed.body_byte_offset :] == b"body \xc3"


def test_lone_surrogate_in_str_input_is_refused() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\nname: \ud800\n---\n")
    assert (info.value.kind, info.value.line, info.value.column) == ("syntax", 2, 7)


def test_split_frontmatter_returns_the_yaml_text_and_body_offset() -> None:
    text, offset = split_frontmatter(V1)
    assert text == "name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
    assert offset == 84
    assert split_frontmatter("---\n---\nbody") == ("", 8)


def test_default_cap_is_one_mebibyte() -> None:
    assert DEFAULT_MAX_BYTES == 1024 * 1024
    just_under = "---\na: " + "x" * (DEFAULT_MAX_BYTES - 4) + "\n---\n"
    assert parse_frontmatter(just_under).data["a"] == "x" * (DEFAULT_MAX_BYTES - 4)
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\na: " + "x" * (DEFAULT_MAX_BYTES - 3) + "\n---\n")
    assert info.value.kind == "limit"


def test_closing_line_just_past_the_search_window() -> None:
    """A '---' cut off at the end of the search window is not taken for the closing line."""
    cap = 100
    doc = "---\na: " + "x" * (cap + 2) + "\n----\n---\n"
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc, max_bytes=cap)
    assert info.value.kind == "limit"


def test_body_line_breaks_are_untouched() -> None:
    doc = "---\na: 1\n---\r\nline\rtwo\r\n"
    parsed = parse_frontmatter(doc)
    assert doc[parsed.body_offset :] == "line\rtwo\r\n"


def test_error_messages_are_one_line_and_located() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(b"---\nname: x\nname: y\n---\n")
    assert str(info.value) == (
        "frontmatter line 3, column 1: duplicate key 'name' (first at line 2)"
    )
