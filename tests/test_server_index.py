"""The digest index: a warm start that serves what a cold start would, after any change that
moves a file's stat signature (and the documented limit: a write through ``mmap`` that does not).

``skills_core.server.index`` (the format, pure) and the index handling of
``skills_core.server.filesystem`` (loading, trusting, writing atomically). The differential tests
compare a cold source with a warm one started from the index after each kind of change; the
corrupt-index tests check that anything wrong with the file makes it absent, never trusted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fs_helpers import alarm as blocking_alarm
from fs_helpers import regular_files, spec_tree, spy_opens, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mmap_helpers import shared_mapping, write_unseen
from server_helpers import KEY, Client, skill_md

import skills_core.server.catalog as catalog_module
import skills_core.server.filesystem as fs_module
from skills_core import spec_examples as ex
from skills_core._version import __version__
from skills_core.entry import Limits
from skills_core.server import (
    FilesystemSource,
    ProblemCode,
    PublishedSkill,
    SkillsServer,
    index_file,
)
from skills_core.server import index as index_module
from skills_core.server._rules import (
    PackedKey,
    ParsedSkillMd,
    SkillRecord,
    pack_key,
    parse_skill_md,
)
from skills_core.server._walk import structure_digest
from skills_core.server.catalog import record_digest
from skills_core.server.index import (
    FORMAT_VERSION,
    DigestIndex,
    DigestIndexError,
    IndexProblem,
    RootIndex,
    decode_index,
    encode_index,
    pack_folder,
    unpack_folder,
)
from skills_core.validation import Finding, Severity

FAR_FUTURE = 1 << 62  # time.time_ns() long after every change: every signature may be trusted


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = spec_tree(tmp_path / "root")
    write(
        folder,
        {
            "acme/billing/refunds/SKILL.md": skill_md("refunds", extra="metadata:\n  a: 1\n"),
            "acme/billing/refunds/examples/email.md": b"Dear customer,\n",
            "acme/billing/refunds/bin/blob.bin": bytes(range(256)) * 40,
            "acme/billing/refunds/bin/large.bin": bytes(range(256)) * 5000,  # read in chunks
            "acme/billing/refunds/nested/SKILL.md": skill_md("nested"),
            "broken/SKILL.md": b"no frontmatter\n",
            "mismatch/SKILL.md": skill_md("other-name"),
            "warns/SKILL.md": skill_md("warns", extra="created: 2025-10-20\n"),
        },
    )
    return folder


@pytest.fixture
def index(tmp_path: Path) -> Path:
    (tmp_path / "state").mkdir()
    return tmp_path / "state" / "skills.index"


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is old enough to be trusted (the tests write them a moment before)."""
    monkeypatch.setattr(time, "time_ns", lambda: FAR_FUTURE)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the filesystem module opens (tests keep the regular files)."""
    return spy_opens(monkeypatch)


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging if anything blocks on a FIFO."""
    with blocking_alarm():
        yield


def served(source: FilesystemSource) -> tuple[list[Any], dict[str, Any]]:
    """Every listed entry, and every listed file's ``resources/read`` result, through a server."""
    client = Client(SkillsServer(source, cursor_key=KEY))
    entries = client.walk("skills/list", "skills")
    reads = {
        resource["uri"]: client.call("resources/read", {"uri": resource["uri"]})["contents"]
        for entry in entries
        for resource in entry["resources"]
    }
    return entries, reads


def assert_warm_equals_cold(
    root: Path, index: Path, opened: list[str] | None = None, **options: Any
) -> list[str]:
    """A fresh warm source (from ``index``) publishes and serves exactly what a cold one does.

    Returns the files the warm source's first scan opened (when ``opened`` spies on them).
    """
    cold = FilesystemSource([root], **options)
    cold_catalog = cold.scan()
    if opened is not None:
        opened.clear()
    warm = FilesystemSource([root], index=index, **options)
    assert warm.scan() == cold_catalog
    read_by_warm_scan = regular_files(opened or [])
    assert served(warm) == served(cold)
    return read_by_warm_scan


def warm_up(root: Path, index: Path, **options: Any) -> FilesystemSource:
    source = FilesystemSource([root], index=index, **options)
    source.scan()
    assert index.is_file()
    return source


# --- the format ----------------------------------------------------------------------------------

DIGEST = "sha256:" + "ab" * 32
OTHER = "sha256:" + "01" * 32
HEADER = b"index %d\n" % FORMAT_VERSION
VERSION = IndexProblem.VERSION
MALFORMED = IndexProblem.MALFORMED


def sample() -> DigestIndex:
    return DigestIndex(
        library=__version__,
        roots=(
            RootIndex(
                path="/srv/skills",
                device=1,
                inode=2,
                mount="",
                files={
                    "a/SKILL.md": ((1, 3, 10, 4, 5), DIGEST),
                    "a/b\udcff.md": ((1, 4, 0, 4, 5), OTHER),  # not UTF-8: kept exactly
                },
                folders={
                    "": ((1, 2, 4096, -4, 5), ("da", "o.sock", "lnk")),
                    "a": ((1, 5, 4096, 4, 5), ("fSKILL.md", "fb\udcff.md", "d...x", "fa\nb")),
                    "a/...x": ((1, 6, 4096, 4, 5), ()),
                },
                skills={
                    "a": SkillRecord(
                        ["SKILL.md", 10, DIGEST, "b\udcff.md", 0, OTHER],
                        '{"uri": "skill://a/SKILL.md", "frontmatter": {"d": "é ✓ 😀"}}'.encode(),
                        (
                            Finding(
                                severity=Severity.WARNING,
                                field="",
                                code="bad-file-name",
                                message="b\udcff.md is not served",
                                file="b\udcff.md",
                            ),
                            Finding(
                                severity=Severity.ERROR,
                                field="/x",
                                code="c",
                                message="m",
                                line=3,
                                column=4,
                            ),
                        ),
                    ),
                },
            ),
        ),
        frontmatter={DIGEST: {"name": "a", "description": "é ✓", "n": [1, 1.5, None, True]}},
    )


def parts(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The header and the columns of an encoded index."""
    _, _, body = data.split(b"\n", 2)
    header_line, columns = zlib.decompress(body).split(b"\n", 1)
    header = json.loads(header_line)
    out: list[bytes] = []
    for length in header["columns"]:
        out.append(columns[:length])
        columns = columns[length:]
    return header, out


def test_format_round_trip_and_layout() -> None:
    data = encode_index(sample())
    magic, checksum, body = data.split(b"\n", 2)
    assert magic == b"skills-core digest index %d" % FORMAT_VERSION
    assert checksum == b"sha256:" + hashlib.sha256(body).hexdigest().encode()
    assert decode_index(data) == sample()
    assert encode_index(sample()) == data  # the same index, the same bytes
    header, columns = parts(data)
    assert zlib.decompress(body).split(b"\n", 1)[0].isascii()
    (section,) = header["roots"]
    assert section["folders"] == 3
    assert (section["skills"], section["keys"]) == (1, 2)
    assert list(section["findings"]) == ["a"]
    assert len(columns) == 8
    assert columns[0] == b"\0a\0a/...x"  # one record per folder, sorted by path
    top, a, x = sample_records()
    assert columns[2] == top + a + x
    assert top == struct.pack("<QQQqqII", 1, 2, 4096, -4, 5, 0, 3) + b"da\0o.sock\0lnk"
    assert a[:48] == struct.pack("<QQQqqII", 1, 5, 4096, 4, 5, 2, 4)  # 2 file rows, 4 items
    assert a[48:120] == struct.pack("<QQQqq", 1, 3, 10, 4, 5) + bytes.fromhex("ab" * 32)
    assert a[120:192] == struct.pack("<QQQqq", 1, 4, 0, 4, 5) + bytes.fromhex("01" * 32)
    assert a[192:].split(b"\0") == [
        b"SKILL.md",
        "b\udcff.md".encode("utf-8", "surrogateescape"),  # not UTF-8: kept exactly
        b"fSKILL.md",
        "fb\udcff.md".encode("utf-8", "surrogateescape"),
        b"d...x",
        b"fa\nb",  # a line feed in a name is kept
    ]
    assert x == struct.pack("<QQQqqII", 1, 6, 4096, 4, 5, 0, 0)
    assert columns[7] == sample().roots[0].skills["a"].encoded_entry


def sample_records() -> list[bytes]:
    """The folder records of the sample, in order."""
    _, columns = parts(encode_index(sample()))
    lengths = [length for (length,) in struct.iter_unpack("<I", columns[1])]
    out = []
    data = columns[2]
    for length in lengths:
        out.append(data[:length])
        data = data[length:]
    return out


def with_records(*records: bytes, paths: bytes = b"\0a\0a/...x") -> bytes:
    """The sample with other folder records (at ``paths``), signed again."""
    return forged(
        root={"folders": len(records)},
        cols={
            0: paths,
            1: b"".join(struct.pack("<I", len(record)) for record in records),
            2: b"".join(records),
        },
    )


def folder_record(rows: int, items: int, names: bytes, signature: bytes | None = None) -> bytes:
    head = signature if signature is not None else struct.pack("<QQQqq", 1, 2, 3, 4, 5)
    return head + struct.pack("<II", rows, items) + b"\1" * 72 * rows + names


def resign(body: bytes, version: int = FORMAT_VERSION) -> bytes:
    """A header with a correct checksum around any body, compressed (what a foreign writer could
    produce)."""
    body = zlib.compress(body)
    return b"skills-core digest index %d\nsha256:%s\n%s" % (
        version,
        hashlib.sha256(body).hexdigest().encode(),
        body,
    )


def forged(
    root: dict[str, Any] | None = None, cols: dict[int, bytes] | None = None, **changes: Any
) -> bytes:
    """The sample with header fields, root fields or columns (``cols``) changed, signed again."""
    header, parts_of = parts(encode_index(sample()))
    header.update(changes)
    if root is not None:
        header["roots"][0].update(root)
    for number, column in (cols or {}).items():
        parts_of[number] = column
    if "columns" not in changes:
        header["columns"] = [len(column) for column in parts_of]
    return resign(json.dumps(header).encode() + b"\n" + b"".join(parts_of))


def listing(*items: str) -> bytes:
    """The sample with two folders: "" holding ``items``, and "a" holding nothing."""
    return with_records(
        struct.pack("<QQQqqII", 1, 2, 3, 4, 5, 0, len(items))
        + "\0".join(items).encode("utf-8", "surrogateescape"),
        struct.pack("<QQQqqII", 1, 5, 3, 4, 5, 0, 0),
        paths=b"\0a",
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", IndexProblem.NOT_AN_INDEX),
        (b"garbage\x00\xff" * 100, IndexProblem.NOT_AN_INDEX),
        (encode_index(sample())[:-40], IndexProblem.CHECKSUM),  # truncated
        (encode_index(sample())[:40], IndexProblem.CHECKSUM),
        (encode_index(sample())[:-1] + b"\0", IndexProblem.CHECKSUM),  # a byte altered
        (encode_index(sample()).replace(HEADER, b"index %d\n" % (FORMAT_VERSION + 1)), VERSION),
        (encode_index(sample()).replace(HEADER, b"index %d\n" % (FORMAT_VERSION - 1)), VERSION),
        (encode_index(sample()).replace(HEADER, b"index 1\n"), VERSION),  # the first format
        (b"skills-core digest index %d" % FORMAT_VERSION, VERSION),
        (resign(b"{not json"), MALFORMED),
        (resign(b"{}"), MALFORMED),  # no line feed after the header
        (resign(b"NaN\n"), MALFORMED),
        (resign(b"[]\n"), MALFORMED),
        (forged(library=1), MALFORMED),
        (forged(scheme=None), MALFORMED),
        (forged(limits=[1]), MALFORMED),
        (forged(roots={}), MALFORMED),
        (forged(roots=[[]]), MALFORMED),
        (forged(frontmatter={"x": {}}), MALFORMED),
        (forged(frontmatter={DIGEST: 1}), MALFORMED),
        (forged(columns=[1, 2]), MALFORMED),  # lengths that do not add up
        (forged(root={"path": 1}), MALFORMED),
        (forged(root={"inode": "2"}), MALFORMED),
        (forged(root={"folders": 4}), MALFORMED),  # more folders than names
        (forged(root={"folders": 0}), MALFORMED),
        (forged(root={"keys": 1}), MALFORMED),
        (forged(root={"skills": 0}), MALFORMED),
        (forged(root={"findings": []}), MALFORMED),
        (forged(root={"findings": {"a": [["warning"]]}}), MALFORMED),
        (forged(root={"findings": {"a": [["bad", "", "c", "m", None, None, None]]}}), MALFORMED),
        (forged(cols={1: struct.pack("<III", 1, 2, 3)}), MALFORMED),  # lengths not the column's
        (forged(cols={4: struct.pack("<I", 3)}), MALFORMED),  # a key of more files
        (forged(cols={7: b'{"url": 1}'}), MALFORMED),
        (forged(cols={7: b'{"uri": 1}\0{"uri": 2}'}), MALFORMED),  # two entries for one record
        (forged(root={"findings": {"a": ["warning"]}}), MALFORMED),
        (forged(root={"findings": {"a": [["warning", "", "c", "m", "3", None, None]]}}), MALFORMED),
        *[(listing("da", item), MALFORMED) for item in ["d..", "d.", "f", "", "xname", "da/b"]],
        # folder records that do not hold what they say
        (with_records(b"\0" * 47, paths=b""), MALFORMED),  # cut short
        (with_records(folder_record(2, 0, b"a"), paths=b""), MALFORMED),  # rows past its end
        (with_records(folder_record(1, 0, b"a\0b"), paths=b""), MALFORMED),  # a name too many
        (with_records(folder_record(1, 1, b"a"), paths=b""), MALFORMED),  # an item short
        (with_records(folder_record(0, 0xFFFFFFFF, b""), paths=b""), MALFORMED),  # signature
        *[
            (with_records(folder_record(1, 0, name), paths=b""), MALFORMED)
            for name in [b"", b"a/b"]
        ],
        (
            with_records(folder_record(0, 0, b""), folder_record(0, 0, b""), paths=b"a\0a"),
            MALFORMED,
        ),
    ],
)
def test_anything_wrong_is_a_typed_error(data: bytes, problem: IndexProblem) -> None:
    with pytest.raises(DigestIndexError) as info:
        decode_index(data)
    assert info.value.kind == problem
    assert info.value.message.startswith("digest index ")


def test_a_listing_of_odd_names_is_read() -> None:
    """The forging helper itself makes a valid index when the names are valid."""
    odd = ["d...", "f.hidden", "l..x", "o\n", "f\udcff"]
    folders = decode_index(listing(*odd)).roots[0].folders
    assert folders[""] == ((1, 2, 3, 4, 5), tuple(odd))
    assert folders["a"] == ((1, 5, 3, 4, 5), ())


def test_signatures_past_the_formats_integers_are_left_out() -> None:
    index = sample()
    (root,) = index.roots
    files = {**root.files, "huge": ((1, 2**64, 1, 1, 1), DIGEST)}
    folders = {**root.folders, "old": ((1, 2, 3, -(2**63) - 1, 0), ())}
    skills = {**root.skills, "big": SkillRecord(["SKILL.md", 2**64, DIGEST], b'{"uri": 1}', ())}
    wider = dataclasses.replace(root, files=files, folders=folders, skills=skills)
    decoded = decode_index(encode_index(dataclasses.replace(index, roots=(wider,))))
    assert decoded == index


def test_a_record_without_its_skill_md_gives_no_frontmatter() -> None:
    assert record_digest(SkillRecord(["x.md", 1, DIGEST], b"{}", ())) is None
    assert record_digest(SkillRecord(["a", 1, OTHER, "SKILL.md", 2, DIGEST], b"{}", ())) == DIGEST


def test_an_encoded_entry_with_a_nul_is_refused() -> None:
    index = sample()
    (root,) = index.roots
    record = root.skills["a"]._replace(encoded_entry=b'{"uri": "\0"}')
    broken = dataclasses.replace(root, skills={"a": record})
    with pytest.raises(ValueError, match="NUL"):
        encode_index(dataclasses.replace(index, roots=(broken,)))


@given(st.binary(max_size=300))
def test_any_bytes_give_an_index_or_a_typed_error(data: bytes) -> None:
    with contextlib.suppress(DigestIndexError):
        decode_index(data)


@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_any_changed_byte_is_detected(position: int, byte: int) -> None:
    data = bytearray(encode_index(sample()))
    position %= len(data)
    if data[position] == byte:
        return
    data[position] = byte
    with pytest.raises(DigestIndexError):
        decode_index(bytes(data))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


_NAME = st.text(st.characters(codec="utf-8", blacklist_characters="/\0"), min_size=1)
_SIGNATURE = st.tuples(*[st.integers(0, 2**64 - 1)] * 3, *[st.integers(-(2**63), 2**63 - 1)] * 2)


@given(
    files=st.dictionaries(
        _NAME, st.tuples(_SIGNATURE, st.sampled_from([DIGEST, OTHER])), max_size=5
    ),
    folders=st.dictionaries(
        _NAME | st.just(""),
        st.tuples(
            _SIGNATURE,
            st.lists(
                st.sampled_from("dflo")
                .flatmap(lambda kind: _NAME.map(lambda n: kind + n))
                .filter(lambda item: item[1:] not in (".", "..")),
                max_size=3,
            ).map(tuple),
        ),
        max_size=4,
    ),
    records=st.dictionaries(
        _NAME,
        st.lists(
            st.tuples(_NAME, st.integers(0, 2**64 - 1), st.sampled_from([DIGEST, OTHER])),
            min_size=1,
            max_size=3,
        ),
        max_size=3,
    ),
    frontmatter=st.dictionaries(
        st.just(DIGEST) | st.just("sha256:" + "0" * 64),
        st.dictionaries(st.text(max_size=5), _JSON, max_size=3) | st.text(max_size=10),
        max_size=2,
    ),
)
def test_round_trip_of_any_index(
    files: dict[str, Any],
    folders: dict[str, Any],
    records: dict[str, list[tuple[str, int, str]]],
    frontmatter: dict[str, Any],
) -> None:
    skills = {
        folder: SkillRecord(
            [value for triple in key for value in triple], b'{"uri": "x%d"}' % number, ()
        )
        for number, (folder, key) in enumerate(records.items())
    }
    index = DigestIndex(
        library="x",
        roots=(
            RootIndex(
                path="/r", device=0, inode=0, mount="m", files=files, folders=folders, skills=skills
            ),
            RootIndex(path="/s", device=1, inode=1),
        ),
        frontmatter=frontmatter,
    )
    assert decode_index(encode_index(index)) == index


_ROW = st.binary(min_size=72, max_size=72)
_PACKED_SIGNATURE = st.binary(min_size=40, max_size=40).filter(lambda b: b != bytes(40))
_ITEM = (
    st.sampled_from("dflo")
    .flatmap(lambda kind: _NAME.map(lambda n: kind + n))
    .filter(lambda item: item[1:] not in (".", ".."))
)


@given(
    listed=st.none() | st.tuples(_PACKED_SIGNATURE, st.lists(_ITEM, max_size=4)),
    rows=st.dictionaries(_NAME, _ROW, max_size=4),
)
def test_a_folder_record_gives_back_what_it_packs(
    listed: tuple[bytes, list[str]] | None, rows: dict[str, bytes]
) -> None:
    """A folder record (format 4, and the filesystem source's cache) holds the folder's
    signature and listing, or neither, and each file's row by name, exactly; an index of
    such records reads back the same records."""
    signature, listing = listed if listed is not None else (None, None)
    record = pack_folder(signature, listing, rows)
    assert unpack_folder(record) == (signature, listing, rows)
    root = RootIndex(path="/r", device=0, inode=0, records={"a/b": record, "": record})
    (decoded,) = decode_index(encode_index(DigestIndex(library="x", roots=(root,)))).roots
    assert decoded.records == {"": record, "a/b": record}
    expected = {
        name: (struct.unpack("<QQQqq", row[:40]), "sha256:" + row[40:].hex())
        for name, row in rows.items()
    }
    assert dict(decoded.files) == {
        **{f"a/b/{name}": value for name, value in expected.items()},
        **expected,
    }
    assert len(decoded.files) == 2 * len(rows)
    assert ("a/b" in decoded.folders) == (listing is not None)


@given(
    st.lists(
        st.tuples(_NAME, st.integers(0, 2**64 - 1), st.sampled_from([DIGEST, OTHER])),
        min_size=1,
        max_size=4,
    )
)
def test_a_packed_key_reads_as_the_list_it_packs(files: list[tuple[str, int, str]]) -> None:
    """A skill record's key as an index reads it and a builder keeps it (no object per file)
    is the list it stands for: equal both ways, the same items and length, the same SKILL.md
    digest, and written to an index as the list is."""
    key: list[str | int] = [value for triple in files for value in triple]
    packed = PackedKey(pack_key(key))
    assert packed == key
    assert key == packed
    assert len(packed) == len(key)
    assert packed[::3] == key[::3]
    assert list(packed) == key
    assert pack_key(packed) == packed.packed
    assert record_digest(SkillRecord(packed, b"{}", ())) == record_digest(
        SkillRecord(key, b"{}", ())
    )

    def roots(k: list[str | int] | PackedKey) -> tuple[RootIndex, ...]:
        record = SkillRecord(k, b'{"uri": 1}', ())
        return (RootIndex(path="/r", device=0, inode=0, skills={"a": record}),)

    as_list = encode_index(DigestIndex(library="x", roots=roots(key)))
    assert encode_index(DigestIndex(library="x", roots=roots(packed))) == as_list
    (decoded,) = decode_index(as_list).roots
    assert isinstance(decoded.skills["a"].key, PackedKey)
    assert decoded.skills["a"].key == key


def test_a_key_no_file_can_have_is_not_packed() -> None:
    with pytest.raises(ValueError, match="not a key"):
        pack_key(["a\0b", 1, DIGEST])
    with pytest.raises(ValueError, match="not a key"):
        pack_key(["a", 1, "sha256:ab"])
    with pytest.raises(struct.error):
        pack_key(["a", 2**64, DIGEST])


def test_a_folder_record_with_a_nul_in_a_name_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        pack_folder(None, None, {"a\0b": bytes(72)})
    with pytest.raises(ValueError, match="NUL"):
        pack_folder(bytes(range(40)), ["fa\0b"], {})


@given(
    st.dictionaries(_NAME, st.none() | st.binary(min_size=40, max_size=40), max_size=4),
    st.dictionaries(_NAME, st.none() | st.binary(min_size=40, max_size=40), max_size=4),
)
def test_structure_digests_are_equal_exactly_when_structures_are(
    one: dict[str, bytes | None], other: dict[str, bytes | None]
) -> None:
    """What a poll compares (the SKILL.md files and their signatures) is kept as a digest:
    equal for equal structures, whatever their order, and different otherwise."""
    assert structure_digest(one) == structure_digest(dict(reversed(one.items())))
    assert (structure_digest(one) == structure_digest(other)) == (one == other)
    for path in one:  # a racy signature is not a known one
        assert structure_digest({**one, path: None}) != structure_digest({**one, path: bytes(40)})


def test_names_with_a_nul_are_refused() -> None:
    index = DigestIndex(
        library="x",
        roots=(RootIndex(path="/", device=0, inode=0, files={"a\0b": ((0, 0, 0, 0, 0), DIGEST)}),),
    )
    with pytest.raises(ValueError, match="NUL"):
        encode_index(index)


# --- a warm start: nothing unchanged is read, hashed or parsed -----------------------------------


def test_warm_start_reads_no_unchanged_file(
    root: Path, index: Path, trusted: None, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = warm_up(root, index).scan()
    parsed: list[bytes] = []

    def spy(data: bytes) -> ParsedSkillMd:
        parsed.append(data)
        return parse_skill_md(data)

    monkeypatch.setattr(catalog_module, "parse_skill_md", spy)
    opened.clear()
    warm = FilesystemSource([root], index=index)
    assert warm.scan() == cold
    assert regular_files(opened) == [str(index)]  # the index, and no file of any skill
    assert parsed == []  # every SKILL.md's frontmatter came from the index
    assert warm.index_note is None


def test_a_warm_start_lists_no_unchanged_folder(
    root: Path, index: Path, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Folders are replayed from their records: one fstatat each, no open, no listing."""
    cold = warm_up(root, index).scan()
    opened = spy_opens(monkeypatch)
    listed: list[object] = []
    real_scandir = os.scandir

    def scandir(fd: Any) -> Any:
        listed.append(fd)
        return real_scandir(fd)

    monkeypatch.setattr(os, "scandir", scandir)
    warm = FilesystemSource([root], index=index)
    assert warm.scan() == cold
    assert listed == []
    assert opened == [str(index), str(root)]  # the index, and the root (its signature, by fstat)
    # A change in one folder lists that folder only (its parents keep their signatures).
    write(root, {"pdf-processing/templates/new.md": b"new\n"})
    cold = FilesystemSource([root]).scan()
    opened.clear()
    listed.clear()
    assert FilesystemSource([root], index=index).scan() == cold
    assert len(listed) == 1
    folders = [p for p in opened if os.path.isdir(p)]
    assert folders == [
        str(root),
        str(root / "pdf-processing"),  # opened name by name from the root
        str(root / "pdf-processing/templates"),
    ]
    assert regular_files(opened) == [str(index), str(root / "pdf-processing/templates/new.md")]


def test_a_folder_whose_signature_cannot_be_read_is_listed(
    root: Path, index: Path, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = warm_up(root, index).scan()
    real_stat = os.stat

    def stat(path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> Any:
        if path == "templates" or str(path).endswith("/templates"):
            raise PermissionError(13, "Permission denied")
        return real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, "stat", stat)
    assert FilesystemSource([root], index=index).scan() == cold  # opened and listed instead


def test_a_recorded_folder_that_can_no_longer_be_listed_is_forgotten(
    root: Path, index: Path, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm_up(root, index)
    assert "pdf-processing/templates" in decode_index(index.read_bytes()).roots[0].folders
    write(root, {"pdf-processing/templates/new.md": b"new\n"})  # its signature moves
    real_scandir = os.scandir

    def scandir(fd: Any) -> Any:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("/templates"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(fd)

    monkeypatch.setattr(os, "scandir", scandir)
    warm = FilesystemSource([root], index=index)
    rechecked = warm.recheck(ex.SKILL_MD_URI)  # a re-check forgets the record too
    assert isinstance(rechecked, PublishedSkill)
    assert "skill://pdf-processing/templates/new.md" not in rechecked.files
    catalog = warm.scan()
    assert catalog == FilesystemSource([root]).scan()
    assert ("pdf-processing/templates", ProblemCode.UNREADABLE) in [
        (p.path, p.code) for p in catalog.problems
    ]
    assert "pdf-processing/templates" not in decode_index(index.read_bytes()).roots[0].folders


def test_a_folder_changed_within_the_tick_of_its_listing_is_listed_again(
    root: Path, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The racy rule, for folders: a young folder is not recorded."""
    templates = root / "pdf-processing/templates"
    changed = templates.stat().st_ctime_ns
    monkeypatch.setattr(time, "time_ns", lambda: changed + 500_000_000)
    warm_up(root, index)
    folders = decode_index(index.read_bytes()).roots[0].folders
    assert "pdf-processing/templates" not in folders
    monkeypatch.setattr(time, "time_ns", lambda: changed + 10 * 10**9)
    FilesystemSource([root], index=index).scan()
    folders = decode_index(index.read_bytes()).roots[0].folders
    (kind_and_names) = folders["pdf-processing/templates"][1]
    assert sorted(kind_and_names) == ["finvoice.md", "fpurchase-order.md"]


def test_a_warm_start_that_changed_nothing_does_not_write(
    root: Path, index: Path, trusted: None
) -> None:
    warm_up(root, index)
    before = index.stat()
    warm_up(root, index)
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_index_holds_what_the_format_says(root: Path, index: Path, trusted: None) -> None:
    warm_up(root, index)
    document = decode_index(index.read_bytes())
    assert document.library == __version__
    (section,) = document.roots
    st = os.stat(root)
    assert (section.path, section.device, section.inode, section.mount) == (
        str(root),
        st.st_dev,
        st.st_ino,
        "",
    )
    invoice = root / "pdf-processing/templates/invoice.md"
    istat = invoice.stat()
    assert section.files["pdf-processing/templates/invoice.md"] == (
        (istat.st_dev, istat.st_ino, istat.st_size, istat.st_mtime_ns, istat.st_ctime_ns),
        "sha256:" + hashlib.sha256(ex.INVOICE).hexdigest(),
    )
    skill_md_digest = section.files["pdf-processing/SKILL.md"][1]
    record = section.skills["pdf-processing"]
    assert record.key[:3] == ["SKILL.md", len(ex.SKILL_MD), skill_md_digest]
    assert json.loads(record.encoded_entry) == ex.entry_json()
    assert record.findings == ()
    assert skill_md_digest not in document.frontmatter  # kept once: in the record's entry
    mismatch = section.files["mismatch/SKILL.md"][1]  # no record: kept in the map
    assert document.frontmatter[mismatch] == {"name": "other-name", "description": "Does things"}
    broken = section.files["broken/SKILL.md"][1]
    assert isinstance(document.frontmatter[broken], str)  # why it has no frontmatter
    assert oct(index.stat().st_mode & 0o777) == "0o600"


# --- skill records: an unchanged skill is restored, not built ------------------------------------


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folder of every skill the catalog builder builds (rather than restores or keeps)."""
    folders: list[str] = []
    real_publish = catalog_module._publish

    def spy(scheme: str, limits: Any, root: int, found: Any, verdict: Any) -> Any:
        folders.append(found[1])
        return real_publish(scheme, limits, root, found, verdict)

    monkeypatch.setattr(catalog_module, "_publish", spy)
    return folders


def test_a_warm_start_restores_unchanged_skills_without_building_them(
    root: Path, index: Path, trusted: None, published: list[str]
) -> None:
    cold = warm_up(root, index).scan()
    published.clear()
    warm = FilesystemSource([root], index=index).scan()
    left_out = sorted(o.path for o in cold.omitted)
    assert left_out == ["acme/billing/refunds", "broken", "mismatch"]
    assert sorted(published) == left_out  # no record: built each time
    for skill in cold.skills:  # a cold build keeps its skills encoded too: build them now
        assert skill.entry.uri == skill.uri
    published.clear()
    for skill, expected in zip(warm.skills, cold.skills, strict=True):
        assert (
            skill.encoded_entry == json.dumps(expected.entry.to_json(), ensure_ascii=False).encode()
        )
        assert (skill.uri, skill.name, skill.root_uri) == (
            expected.entry.uri,
            expected.entry.name,
            expected.entry.root,
        )
        assert skill.findings == expected.findings
    assert published == []  # nothing built yet: no entry was read
    assert warm == cold  # reading the entries builds them, from the same parts
    assert sorted(published) == sorted(s.folder for s in cold.skills)  # once each
    assert warm == cold
    assert len(published) == len(cold.skills)
    assert [repr(s) for s in warm.skills] == [repr(s) for s in cold.skills]
    with pytest.raises(dataclasses.FrozenInstanceError):
        warm.skills[0].folder = "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del warm.skills[0].folder
    with pytest.raises(TypeError, match="mappingproxy"):  # as the dataclass it was: files
        hash(cold.skills[0])
    with pytest.raises(TypeError, match="mappingproxy"):
        hash(warm.skills[0])
    again = FilesystemSource([root], index=index).scan()
    assert [s.files for s in again.skills] == [s.files for s in cold.skills]  # files first
    assert [s.entry for s in again.skills] == [s.entry for s in cold.skills]
    assert (again.skills[0] == "x") is False


def test_a_rescan_keeps_the_skills_that_did_not_change(
    root: Path, trusted: None, published: list[str]
) -> None:
    source = FilesystemSource([root])
    first = source.scan()
    (root / "pdf-processing/templates/invoice.md").write_bytes(b"changed\n")
    published.clear()
    second = source.scan()
    assert sorted(published) == ["acme/billing/refunds", "broken", "mismatch", "pdf-processing"]
    for before, after in zip(first.skills, second.skills, strict=True):
        assert (after is before) is (after.folder != "pdf-processing")
    assert second == FilesystemSource([root]).scan()


@pytest.mark.parametrize(
    "options",
    [{"scheme": "other"}, {"limits": Limits(max_resources=3)}, {"include_hidden": True}],
    ids=["another scheme", "other limits", "other options"],
)
def test_records_of_another_catalog_are_not_restored(
    root: Path, index: Path, trusted: None, published: list[str], options: dict[str, Any]
) -> None:
    write(root, {"pdf-processing/.env": b"X=1\n"})
    warm_up(root, index)
    published.clear()
    warm = FilesystemSource([root], index=index, **options).scan()
    if "include_hidden" in options:  # the same scheme and limits: only the changed skill
        assert "pdf-processing" in published
        assert "warns" not in published
    else:
        assert "warns" in published  # nothing restored
    assert warm == FilesystemSource([root], **options).scan()


def test_records_of_several_roots_with_a_collision(
    root: Path, index: Path, tmp_path: Path, trusted: None, published: list[str]
) -> None:
    """Each root's records are its own; skills two roots claim are left out, warm or cold."""
    other = tmp_path / "other"
    write(other, {"warns/SKILL.md": skill_md("warns"), "solo/SKILL.md": skill_md("solo")})
    cold = FilesystemSource([root, other]).scan()
    assert [o.path for o in cold.omitted if o.code == "uri-collision"] == ["warns", "warns"]
    FilesystemSource([root, other], index=index).scan()
    published.clear()
    warm = FilesystemSource([root, other], index=index)
    assert warm.scan() == cold
    assert "solo" not in published[: -len(cold.skills)]  # restored (then built, to compare)
    assert sorted(decode_index(index.read_bytes()).roots[1].skills) == ["solo"]
    assert served(warm) == served(FilesystemSource([root, other]))


def test_a_recheck_of_a_restored_skill_sees_changes_at_once(
    root: Path, index: Path, trusted: None
) -> None:
    warm_up(root, index)
    source = FilesystemSource([root], index=index)
    restored = source.scan().get(ex.SKILL_MD_URI)
    assert restored is not None
    assert restored.encoded_entry is not None
    assert source.recheck(ex.SKILL_MD_URI) is restored  # unchanged: the same skill
    write(root, {"pdf-processing/templates/new.md": b"new\n"})
    rechecked = source.recheck(ex.SKILL_MD_URI)
    assert rechecked == FilesystemSource([root]).recheck(ex.SKILL_MD_URI)
    assert isinstance(rechecked, PublishedSkill)
    assert "skill://pdf-processing/templates/new.md" in rechecked.files


def forge_record(index: Path, folder: str, encoded_entry: bytes) -> None:
    """Rewrite the index (a valid checksum) with another encoded entry for ``folder``."""
    document = decode_index(index.read_bytes())
    (section,) = document.roots
    skills = dict(section.skills)
    skills[folder] = skills[folder]._replace(encoded_entry=encoded_entry)
    forged = dataclasses.replace(section, skills=skills)
    index.write_bytes(encode_index(dataclasses.replace(document, roots=(forged,))))


def test_a_record_that_does_not_fit_its_skill_fails_closed(
    root: Path, index: Path, trusted: None
) -> None:
    """A record is trusted as the index is; one that cannot be its skill's is an error."""
    warm_up(root, index)
    cold = FilesystemSource([root]).scan()
    # Another skill's entry: not restored (its URI is not this skill's), and not taken for the
    # frontmatter of this skill's SKILL.md (not read, as it is unchanged): the scan starts again.
    forge_record(index, "warns", json.dumps(cold.skills[0].entry.to_json()).encode())
    source = FilesystemSource([root], index=index)
    assert source.scan() == cold
    assert source.index_note is not None
    # This skill's URI, and a frontmatter that is not valid: restored, and an error when built.
    entry = {"uri": "skill://warns/SKILL.md", "frontmatter": {"name": "warns"}, "resources": []}
    forge_record(index, "warns", json.dumps(entry).encode())
    warm = FilesystemSource([root], index=index).scan()
    skill = warm.get("skill://warns/SKILL.md")
    assert skill is not None
    with pytest.raises(RuntimeError, match="does not match the skill"):
        _ = skill.entry
    # No frontmatter object at all: as an error when built ...
    forge_record(index, "warns", b'{"uri": "skill://warns/SKILL.md", "frontmatter": 7}')
    skill = FilesystemSource([root], index=index).scan().get("skill://warns/SKILL.md")
    assert skill is not None
    with pytest.raises(RuntimeError, match="does not match the skill"):
        _ = skill.entry
    # ... and when it is the frontmatter of a SKILL.md not read (another file of the skill
    # changed): the index is found unusable then, and the scan starts again, cold.
    forge_record(index, "pdf-processing", b'{"uri": "skill://pdf-processing/SKILL.md", "x": 1}')
    (root / "pdf-processing/templates/invoice.md").write_bytes(b"changed\n")
    source = FilesystemSource([root], index=index)
    assert source.scan() == FilesystemSource([root]).scan()
    assert source.index_note is not None
    assert source.index_note.endswith(
        "ignored and is rebuilt: is malformed (a record's encoded entry is not its skill's entry)"
    )
    decode_index(index.read_bytes())  # rebuilt, whole
    assert FilesystemSource([root], index=index).scan() == FilesystemSource([root]).scan()


# --- the differential test: warm == cold after every kind of change ------------------------------


def _same_size_edit(root: Path) -> None:
    invoice = root / "pdf-processing/templates/invoice.md"
    before = invoice.stat()
    invoice.write_bytes(ex.INVOICE.replace(b"Amount", b"Amoun7"))
    os.utime(invoice, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime kept; ctime moves


def _replace_with_a_copy(root: Path) -> None:
    email = root / "acme/billing/refunds/examples/email.md"
    data = email.read_bytes()
    email.unlink()
    email.write_bytes(data)  # another inode, the same bytes


def _swap_contents(root: Path) -> None:
    a = root / "pdf-processing/templates/invoice.md"
    b = root / "pdf-processing/templates/purchase-order.md"
    tmp = a.with_name("tmp")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


def _link_skill_md(root: Path) -> None:
    (root / "warns/SKILL.md").unlink()
    (root / "warns/SKILL.md").symlink_to(root / "pdf-processing/SKILL.md")


def _link_a_folder(root: Path) -> None:
    (root / "warns").rename(root / ".moved")
    (root / "warns").symlink_to(root / ".moved")


def _file_to_folder(root: Path) -> None:
    (root / "pdf-processing/templates/invoice.md").unlink()
    write(root, {"pdf-processing/templates/invoice.md/x.md": b"x\n"})


def _folder_to_file(root: Path) -> None:
    shutil.rmtree(root / "acme/billing/refunds/examples")
    (root / "acme/billing/refunds/examples").write_bytes(b"now a file\n")


CHANGES: dict[str, Callable[[Path], object]] = {
    "nothing": lambda root: None,
    "edit": lambda root: (root / "pdf-processing/templates/invoice.md").write_bytes(b"new\n"),
    "same-size edit, mtime kept": _same_size_edit,
    "touch without change": lambda root: os.utime(root / "pdf-processing/SKILL.md"),
    "rename a file": lambda root: (root / "pdf-processing/templates/invoice.md").rename(
        root / "pdf-processing/templates/bill.md"
    ),
    "swap two files by renames": _swap_contents,
    "replace a file by a copy": _replace_with_a_copy,
    "rename a skill folder": lambda root: (root / "warns").rename(root / "renamed"),
    "delete a skill": lambda root: shutil.rmtree(root / "acme/billing/refunds"),
    "add a skill": lambda root: write(root, {"added/SKILL.md": skill_md("added")}),
    "break a SKILL.md": lambda root: (root / "pdf-processing/SKILL.md").write_bytes(b"---\n"),
    "fix a SKILL.md": lambda root: (root / "broken/SKILL.md").write_bytes(skill_md("broken")),
    "rename to fix a name": lambda root: (root / "mismatch").rename(root / "other-name"),
    "SKILL.md swapped for a link": _link_skill_md,
    "add a hidden file": lambda root: write(root, {"pdf-processing/.env": b"X=1\n"}),
    "move a file between skills": lambda root: (root / "acme/billing/refunds/bin/blob.bin").rename(
        root / "pdf-processing/blob.bin"
    ),
    "add a file in a subfolder": lambda root: write(
        root, {"pdf-processing/templates/new.md": b"new\n"}
    ),
    "a skill folder swapped for a link to itself": _link_a_folder,
    "a file becomes a folder": _file_to_folder,
    "a folder becomes a file": _folder_to_file,
    "same-size edit of a large file": lambda root: (
        root / "acme/billing/refunds/bin/large.bin"
    ).write_bytes(bytes(range(255, -1, -1)) * 5000),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_warm_start_serves_what_a_cold_start_does(
    root: Path, index: Path, trusted: None, change: str
) -> None:
    warm_up(root, index)
    CHANGES[change](root)
    assert_warm_equals_cold(root, index)
    assert_warm_equals_cold(root, index)  # and from the index that warm start wrote


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=5))
def test_warm_equals_cold_after_any_sequence_of_changes(
    tmp_path_factory: pytest.TempPathFactory, trusted: None, steps: list[str]
) -> None:
    base = tmp_path_factory.mktemp("seq")
    root = base / "root"
    write(root, {f"pdf-processing/{p}": b for p, b in ex.FILES.items()})
    write(
        root,
        {
            "acme/billing/refunds/SKILL.md": skill_md("refunds"),
            "acme/billing/refunds/examples/email.md": b"Dear customer,\n",
            "acme/billing/refunds/bin/blob.bin": b"\0" * 100,
            "broken/SKILL.md": b"x\n",
            "mismatch/SKILL.md": skill_md("other-name"),
            "warns/SKILL.md": skill_md("warns"),
        },
    )
    index = base / "i"
    warm_up(root, index)
    for step in steps:
        try:
            CHANGES[step](root)
        except OSError:
            continue  # a step that no longer applies (the file was renamed away)
        assert_warm_equals_cold(root, index)


# --- racy signatures: git's rule ------------------------------------------------------------------


def coarse_filesystem(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend timestamps have whole seconds and ctime does not exist (the worst case)."""
    monkeypatch.setattr(
        fs_module,
        "_stat_key",
        lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // 10**9 * 10**9, 0),
    )


@pytest.mark.parametrize("racy", [True, False])
def test_a_file_changed_within_the_tick_of_its_hashing_is_hashed_again(
    root: Path, index: Path, monkeypatch: pytest.MonkeyPatch, racy: bool
) -> None:
    coarse_filesystem(monkeypatch)
    invoice = root / "pdf-processing/templates/invoice.md"
    second = invoice.stat().st_ctime_ns // 10**9 * 10**9
    os.utime(invoice, ns=(second, second))  # mtime: a whole second; ctime: the real time now
    changed = invoice.stat().st_ctime_ns
    # The index is written 0.5 s (racy) or 10 s (not racy) after the file's last change.
    now = changed + (500_000_000 if racy else 10 * 10**9)
    monkeypatch.setattr(time, "time_ns", lambda: now)
    warm_up(root, index)
    files = decode_index(index.read_bytes()).roots[0].files
    assert ("pdf-processing/templates/invoice.md" in files) is not racy
    # A same-size edit in the same second: the coarse signature cannot tell.
    invoice.write_bytes(ex.INVOICE.replace(b"Amount", b"Amoun7"))
    os.utime(invoice, ns=(second, second + 700_000_000))  # the same second, as coarse clocks see it
    cold = FilesystemSource([root]).scan()
    warm = FilesystemSource([root], index=index).scan()
    if racy:
        assert warm == cold  # never recorded as clean, so hashed again
    else:
        # The control: a signature recorded as clean is trusted. On a real filesystem the edit
        # moves ctime, which this simulation removed; within the tick, only the rule above helps.
        assert warm != cold


# --- what the index cannot see: a write that moves no timestamp (documented) ----------------------


def test_a_write_through_a_shared_mapping_is_not_seen_until_touched_or_the_index_is_removed(
    root: Path, index: Path, trusted: None
) -> None:
    """The limit the README states, on a real ``mmap`` write, and both ways out of it it gives:
    ``touch`` the file (a running server sees it at the next ``skills/get``), or delete the index
    (the next start is cold)."""
    invoice = root / "pdf-processing/templates/invoice.md"
    uri = "skill://pdf-processing/templates/invoice.md"
    edited = b"MAPPED" + ex.INVOICE[6:]

    def digest_of(source: FilesystemSource, skill: PublishedSkill | None = None) -> str:
        skill = skill or source.scan().get(ex.SKILL_MD_URI)
        assert skill is not None
        resource = skill.entry.resource(uri)
        assert resource is not None
        return resource.digest

    def sha(data: bytes) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()

    with shared_mapping(invoice) as mapping:
        warm_up(root, index)
        write_unseen(mapping, invoice, b"MAPPED", lambda: warm_up(root, index))
    assert invoice.read_bytes() == edited
    warm = FilesystemSource([root], index=index)
    assert digest_of(warm) == sha(ex.INVOICE)  # the old digest, published
    assert digest_of(FilesystemSource([root])) == sha(edited)  # what a cold start publishes
    skill = warm.scan().get(ex.SKILL_MD_URI)
    assert skill is not None
    assert warm.read(skill, "templates/invoice.md") == edited  # reads serve the bytes on disk
    os.utime(invoice)  # touch: the signature moves
    rechecked = warm.recheck(ex.SKILL_MD_URI)
    assert isinstance(rechecked, PublishedSkill)
    assert digest_of(warm, rechecked) == sha(edited)
    index.unlink()
    assert digest_of(FilesystemSource([root], index=index)) == sha(edited)


# --- a corrupt, foreign or special index is absent, never trusted --------------------------------


def corruptions(index: Path) -> dict[str, Callable[[], object]]:
    def truncate() -> None:
        data = index.read_bytes()
        index.write_bytes(data[: len(data) // 2])

    def flip() -> None:
        data = bytearray(index.read_bytes())
        data[-10] ^= 1
        index.write_bytes(bytes(data))

    def future() -> None:
        index.write_bytes(index.read_bytes().replace(HEADER, b"index 99\n", 1))

    return {
        "truncated": truncate,
        "garbage": lambda: index.write_bytes(os.urandom(4096)),
        "empty": lambda: index.write_bytes(b""),
        "a flipped bit": flip,
        "a future version": future,
        "JSON that is not an index": lambda: index.write_bytes(resign(b'{"library": 1}')),
    }


@pytest.mark.parametrize(
    "case",
    [
        "truncated",
        "garbage",
        "empty",
        "a flipped bit",
        "a future version",
        "JSON that is not an index",
    ],
)
def test_a_corrupt_index_is_rebuilt_not_trusted(
    root: Path, index: Path, trusted: None, opened: list[str], case: str
) -> None:
    warm_up(root, index)
    cold = FilesystemSource([root]).scan()
    corruptions(index)[case]()
    opened.clear()
    warm = FilesystemSource([root], index=index)
    assert warm.scan() == cold
    assert warm.index_note is not None
    assert "ignored and is rebuilt" in warm.index_note
    read = regular_files(opened)
    assert str(root / "pdf-processing/templates/purchase-order.md") in read  # hashed again
    assert str(root / "pdf-processing/SKILL.md") in read
    decode_index(index.read_bytes())  # rebuilt, whole


def test_another_roots_index_contributes_nothing(
    root: Path, index: Path, tmp_path: Path, trusted: None, opened: list[str]
) -> None:
    other = tmp_path / "other"
    write(other, {f"pdf-processing/{p}": b for p, b in ex.FILES.items()})
    warm_up(other, index)
    read = assert_warm_equals_cold(root, index, opened)
    assert str(root / "pdf-processing/templates/invoice.md") in read
    sections = decode_index(index.read_bytes()).roots
    assert [s.path for s in sections] == [str(root)]


def test_a_root_folder_replaced_under_the_same_path_is_another_root(
    root: Path, index: Path, trusted: None, opened: list[str]
) -> None:
    warm_up(root, index)
    moved = root.with_name("moved")
    root.rename(moved)
    moved.rename(root)  # the same folder: still trusted
    opened.clear()
    FilesystemSource([root], index=index).scan()
    assert regular_files(opened) == [str(index)]
    copy = root.with_name("copy")
    shutil.copytree(root, copy, symlinks=True)
    shutil.rmtree(root)
    copy.rename(root)  # the same path, another folder (and other inodes)
    read = assert_warm_equals_cold(root, index, opened)
    assert str(root / "pdf-processing/templates/invoice.md") in read


def test_an_index_of_another_library_version_reuses_digests_not_frontmatter(
    root: Path, index: Path, trusted: None, opened: list[str]
) -> None:
    warm_up(root, index)
    document = decode_index(index.read_bytes())
    index.write_bytes(
        encode_index(
            DigestIndex(library="0.0.0", roots=document.roots, frontmatter=document.frontmatter)
        )
    )
    read = assert_warm_equals_cold(root, index, opened)
    assert not any(p.endswith("invoice.md") for p in read)  # digests reused
    assert str(root / "pdf-processing/SKILL.md") in read  # frontmatter parsed again
    assert decode_index(index.read_bytes()).library == __version__  # and recorded anew


def test_a_fifo_in_the_index_place_does_not_block(
    root: Path, index: Path, alarm: None, trusted: None
) -> None:
    os.mkfifo(index)
    source = FilesystemSource([root], index=index)
    assert source.index_note is not None
    assert "not a regular file" in source.index_note
    assert source.scan() == FilesystemSource([root]).scan()
    assert index.is_file()  # replaced by a whole index
    decode_index(index.read_bytes())


def test_a_symlink_in_the_index_place_is_not_followed(
    root: Path, index: Path, tmp_path: Path, trusted: None
) -> None:
    real = tmp_path / "real.index"
    warm_up(root, real)
    (root / "pdf-processing/templates/invoice.md").write_bytes(b"changed\n")
    target_bytes = real.read_bytes()
    index.symlink_to(real)
    source = FilesystemSource([root], index=index)
    assert source.index_note is not None
    assert "symbolic link" in source.index_note
    assert source.scan() == FilesystemSource([root]).scan()
    assert not index.is_symlink()  # the link was replaced, never written through
    assert real.read_bytes() == target_bytes


def test_an_index_too_large_is_not_read(
    root: Path, index: Path, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm_up(root, index)
    monkeypatch.setattr(index_file, "MAX_INDEX_BYTES", 100)
    source = FilesystemSource([root], index=index)
    assert source.index_note is not None
    assert "larger than 100 bytes" in source.index_note


def test_an_index_that_cannot_be_written_is_reported_and_changes_nothing(
    root: Path, index: Path, trusted: None
) -> None:
    index.mkdir()  # a folder in its place
    source = FilesystemSource([root], index=index)
    assert source.scan() == FilesystemSource([root]).scan()
    assert source.index_note is not None
    assert "could not be written" in source.index_note
    assert sorted(p.name for p in index.parent.iterdir()) == [index.name]  # no temporary left
    missing = FilesystemSource([root], index=index.parent / "no-such-folder" / "i")
    missing.scan()
    assert missing.index_note is not None
    assert "could not be written" in missing.index_note


def test_concurrent_writers_never_leave_a_partial_index(root: Path, index: Path) -> None:
    """Workers of one server share the index: each writes a whole file and renames it."""
    payloads = [
        encode_index(
            DigestIndex(
                library=str(n),
                roots=(
                    RootIndex(
                        path="/r",
                        device=1,
                        inode=2,
                        files={f"f{i}": ((1, i, i, 1, 1), DIGEST) for i in range(n * 500)},
                    ),
                ),
            )
        )
        for n in range(1, 4)
    ]
    index_file.write_atomically(str(index), payloads[0])
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(data: bytes) -> None:
        try:
            for _ in range(40):
                index_file.write_atomically(str(index), data)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    def reader() -> None:
        while not stop.is_set():
            try:
                decode_index(index.read_bytes())
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
                return

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    watcher.join()
    assert errors == []
    assert index.read_bytes() in payloads
    assert sorted(p.name for p in index.parent.iterdir()) == [index.name]


def test_two_sources_sharing_an_index_both_start_warm(
    root: Path, index: Path, trusted: None, opened: list[str]
) -> None:
    first = warm_up(root, index)
    opened.clear()
    second = FilesystemSource([root], index=index)
    assert second.scan() == first.scan()
    assert regular_files(opened) == [str(index)]


def test_a_mounted_root_is_indexed_under_its_name(
    root: Path, index: Path, trusted: None, opened: list[str]
) -> None:
    skill = root / "pdf-processing"
    warm_up(skill, index)
    (section,) = decode_index(index.read_bytes()).roots
    assert section.mount == "pdf-processing"
    assert "pdf-processing/templates/invoice.md" in section.files
    assert assert_warm_equals_cold(skill, index, opened) == [str(index)]


def test_an_index_that_cannot_be_opened_is_reported(
    root: Path, index: Path, trusted: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm_up(root, index)
    real_open = os.open

    def refuse(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == str(index):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", refuse)
    source = FilesystemSource([root], index=index)
    assert source.index_note is not None
    assert source.index_note.endswith("ignored and is rebuilt: Permission denied")
    assert source.index_path == str(index)
    assert FilesystemSource([root]).index_path is None


def test_a_file_that_became_racy_leaves_a_rechecked_cache(
    root: Path, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-checking one skill drops a trusted entry whose file just changed (it is young now)."""
    monkeypatch.setattr(time, "time_ns", lambda: FAR_FUTURE)
    source = warm_up(root, index)
    invoice = root / "pdf-processing/templates/invoice.md"
    invoice.write_bytes(b"changed now\n")
    monkeypatch.setattr(time, "time_ns", lambda: invoice.stat().st_ctime_ns + 1)
    result = source.recheck(ex.SKILL_MD_URI)
    assert result is not None
    source.scan()  # the full scan after it writes the index without that file
    files = decode_index(index.read_bytes()).roots[0].files
    assert "pdf-processing/templates/invoice.md" not in files
    assert "pdf-processing/templates/purchase-order.md" in files


def test_a_body_past_its_bound_once_decompressed_is_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = encode_index(sample())
    assert decode_index(data) == sample()
    monkeypatch.setattr(index_module, "MAX_BODY_BYTES", 64)
    with pytest.raises(DigestIndexError) as caught:
        decode_index(data)
    assert caught.value.kind is MALFORMED
    assert "larger than its bound" in caught.value.reason


def test_a_served_warm_start_keeps_one_record_per_folder_and_builds_no_entry(
    root: Path, index: Path, trusted: None
) -> None:
    """What a large catalog's memory rests on: a warm-started source keeps one bytes record per
    folder (its signature, listing and files' rows, as the index stores it) and nothing per
    file; a server listing every page, and looking for changes, builds no skill's entry (each
    is kept as its encoded entry)."""
    warm_up(root, index)
    (section,) = decode_index(index.read_bytes()).roots
    assert section.records is not None
    source = FilesystemSource([root], index=index)
    server = SkillsServer(source, cursor_key=KEY)
    (records,) = source._caches
    assert set(records) == set(section.records)
    assert all(type(record) is bytes for record in records.values())
    walked = {p.parent.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert {"" if f == "." else f for f in walked} <= set(records)  # every folder of files
    client = Client(server)
    listed = client.call("skills/list", {})["skills"]
    assert len(listed) == len(server.catalog.skills) > 1
    assert server.changes() is None
    assert [skill._entry for skill in server.catalog.skills] == [None] * len(listed)
    assert server.catalog.skills[0].entry.to_json() == listed[0]  # built when read, the same
