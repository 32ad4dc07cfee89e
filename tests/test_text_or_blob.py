"""Large text files: sent as ``text`` unless JSON escaping would outgrow base64, decided in one pass.

``skills_core.messages._text_escapes_past_base64`` used to count each of the 37 byte sequences
JSON escapes with its own ``bytes.count`` over the whole file (about a third of a second of CPU
per read of an 8 MiB file); it now deletes, in one ``bytes.translate`` pass, every byte that
cannot grow, and counts the few that are left. The decision must be the same as the count-based
one, for every input: a differential hypothesis test against that formula (with the size
threshold lowered so that small inputs are judged), the exact boundaries, and the passes made
over the file itself. ``tests/benchmarks/bench_large_read.py`` measures the time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core import messages
from skills_core.jsonrpc import encode_result
from skills_core.messages import encode_resource_contents

#: The count-based formula the one-pass check replaced: bytes JSON escapes, and how much longer
#: each escape is than the raw bytes it replaces.
REFERENCE_GROWTH = (
    *((bytes([b]), 5) for b in range(0x20) if b not in (0x08, 0x09, 0x0A, 0x0C, 0x0D)),
    *((bytes([b]), 1) for b in (0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x22, 0x5C)),
    ("\u0085".encode(), 4),
    ("\u2028".encode(), 3),
    ("\u2029".encode(), 3),
)


def reference(data: bytes) -> bool:
    growth = sum(data.count(raw) * extra for raw, extra in REFERENCE_GROWTH)
    return len(data) + growth > 4 * -(-len(data) // 3)


def json_growth(data: bytes) -> int:
    """How much longer ``data`` is as a JSON string (what the server writes) than as bytes."""
    item = {"text": data.decode()}
    written = encode_result(item, check_keys=False).json
    return len(written) - len(b'{"text":""}') - len(data)


#: Characters that escape, characters whose UTF-8 ends in 0x85, 0xA8 or 0xA9 without being
#: escaped, and plain ones.
CHARACTERS = st.sampled_from(
    [
        *(chr(c) for c in range(0x20)),
        '"',
        "\\",
        "\u0085",
        "\u2028",
        "\u2029",
        "\u0445",  # Cyrillic ha: D1 85
        "\u0168",  # U with tilde: C5 A8
        "\u00a9",  # copyright sign: C2 A9
        "\u20a8",  # rupee sign: E2 82 A8
        "a",
        " ",
        "\u00e9",
        "\U0001f600",
    ]
)


@pytest.fixture
def no_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages, "_ESCAPE_CHECK_THRESHOLD", 0)


@settings(max_examples=400, deadline=None)
@given(text=st.text(CHARACTERS, max_size=200))
def test_the_decision_is_the_count_based_one(text: str) -> None:
    data = text.encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(messages, "_ESCAPE_CHECK_THRESHOLD", 0)
        assert messages._text_escapes_past_base64(data) == reference(data)


@settings(max_examples=200, deadline=None)
@given(text=st.text(CHARACTERS, max_size=120))
def test_the_formula_is_what_the_encoder_writes(text: str) -> None:
    """The growth counted is the growth the JSON encoder gives (so the decision is about bytes
    that are really sent)."""
    data = text.encode()
    assert json_growth(data) == sum(data.count(raw) * extra for raw, extra in REFERENCE_GROWTH)


@pytest.mark.parametrize(
    "filler",
    [
        "\n",  # a short escape: one byte more
        "\x01",  # a control: five more
        "\u0085",  # four more, from 0x85
        "\u2028",  # three more, from 0xA8
        "\u0445",  # 0x85 that is not U+0085: nothing more
        "\u0168",  # 0xA8 that is not U+2028: nothing more
    ],
)
def test_at_the_boundary_one_byte_decides(no_threshold: None, filler: str) -> None:
    """Files whose JSON form is as long as base64 go as text, one byte longer as blob."""
    for copies in range(1, 40):
        for pad in range(12):
            data = (filler * copies + "a" * pad).encode()
            assert messages._text_escapes_past_base64(data) == reference(data), (copies, pad)


class Passes(bytes):
    """Bytes that record which methods are called on them (not on what they return)."""

    calls: list[str]

    def translate(self, *args: Any) -> bytes:
        self.calls.append("translate")
        return bytes(self).translate(*args)

    def count(self, *args: Any) -> int:
        self.calls.append("count")
        return bytes(self).count(*args)


def passes_over(data: bytes) -> list[str]:
    spied = Passes(data)
    spied.calls = []
    messages._text_escapes_past_base64(spied)
    return spied.calls


def test_an_8_mib_text_file_is_read_once() -> None:
    prose = b"".join(b"Line %06d of a skill's reference text.\n" % i for i in range(220_000))
    cyrillic = "".join(f"Строка {i:06d}: пример текста, хорошо.\n" for i in range(200_000))
    for data in (prose[: 8 << 20], cyrillic.encode(), b"\n" * (8 << 20)):
        assert len(data) >= 8 << 20
        assert passes_over(data) == ["translate"]
    assert encode_resource_contents("skill://a/b", prose, None).keys() == {"uri", "text"}
    assert encode_resource_contents("skill://a/b", b"\n" * (8 << 20), None).keys() == {
        "uri",
        "blob",
    }


def test_separators_are_counted_only_when_the_bound_decides_nothing() -> None:
    """Many 0x85 bytes of Cyrillic ha (U+0445) with escapes close to the limit: the three separators
    are then counted (three more passes), and the answer is still the exact one."""
    size = 3 << 20
    room = 4 * -(-size // 3) - size
    newlines = room - 10  # growth just under the room ...
    ha = 100  # ... and a hundred 0x85 bytes that could each add four
    rest = size - newlines - 2 * ha
    data = b"\n" * newlines + "\u0445".encode() * ha + b"a" * rest
    assert len(data) == size
    assert passes_over(data) == ["translate", "count", "count", "count"]
    assert messages._text_escapes_past_base64(data) is reference(data) is False
    with_separators = data[: -2 * 6] + "\u2028".encode() * 4  # twelve more bytes of growth
    assert len(with_separators) == size
    assert messages._text_escapes_past_base64(with_separators) is reference(with_separators)
    assert reference(with_separators) is True


def test_the_answer_is_unchanged(no_threshold: None) -> None:
    """Whole results, text and blob, as the server writes them."""
    for text in ("plain", "\n" * 10, "a\u2028b" * 3, '"' * 9 + "x" * 3):
        item = encode_resource_contents("skill://a/b", text.encode(), "text/plain")
        expected = "blob" if reference(text.encode()) else "text"
        assert expected in item
        json.dumps(item)
