"""The one display function: untrusted text is shown, never obeyed, by a terminal (docs/design.md#d11)."""

from __future__ import annotations

import json
import unicodedata

import pytest
from ci_runner import command_in, commandish, commands_in
from hypothesis import given
from hypothesis import strategies as st

from skills_core.display import DESCRIPTION_LIMIT, display, display_json, display_line, is_safe

UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("line\nbreak", "line\\nbreak"),
        ("carriage\rreturn", "carriage\\rreturn"),
        ("tab\there", "tab\\there"),
        ("\x1b[8mconcealed", "\\x1b[8mconcealed"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\x7f"),
        ("c1 csi\x9b2J", "c1 csi\\x9b2J"),
        ("bidi \u202etxt.exe", "bidi \\u202etxt.exe"),
        ("isolate \u2066x\u2069", "isolate \\u2066x\\u2069"),
        ("zero\u200bwidth\u200d\u2060\ufeff", "zero\\u200bwidth\\u200d\\u2060\\ufeff"),
        ("line\u2028sep\u2029para", "line\\u2028sep\\u2029para"),
        ("tag \U000e0041\U000e007f", "tag \\U000e0041\\U000e007f"),
        ("lone \udcff surrogate", "lone \\udcff surrogate"),
        ("private \ue000", "private \\ue000"),
        ("caf\u00e9 \u65e5\u672c \U0001f600", "caf\u00e9 \u65e5\u672c \U0001f600"),
    ],
)
def test_display_escapes_controls_and_invisible_characters(raw: str, shown: str) -> None:
    assert display(raw) == shown
    assert is_safe(shown)
    assert is_safe(raw) is (raw == shown)


def test_a_forged_prompt_stays_on_one_line() -> None:
    forged = (
        "ok\n  1 files, 10 bytes:\n      10  sha256:00...  skill://x/SKILL.md\n"
        "Approve this manifest? [y/N] "
    )
    shown = display(forged)
    assert "\n" not in shown
    assert shown.startswith("ok\\n  1 files")


def test_display_line_cuts_and_states_the_full_length() -> None:
    text = "word " * 200
    shown = display_line(text)
    assert shown.startswith(("word " * 60)[:DESCRIPTION_LIMIT])
    assert shown.endswith("... (1,000 characters in all)")
    assert display_line("short") == "short"
    assert display_line("a\nb", limit=10) == "a\\nb"
    with pytest.raises(ValueError, match="at least 1"):
        display_line("x", limit=0)


@given(st.text(alphabet=st.characters(exclude_categories=())))
def test_display_output_has_no_unsafe_character(text: str) -> None:
    shown = display(text)
    assert not any(unicodedata.category(ch) in UNSAFE for ch in shown)
    assert is_safe(shown)
    shown.encode("utf-8")  # strict: never a lone surrogate


@given(
    st.text(alphabet=st.characters(exclude_categories=())), st.integers(min_value=1, max_value=50)
)
def test_display_line_is_bounded(text: str, limit: int) -> None:
    shown = display_line(text, limit)
    suffix = f"... ({len(text):,} characters in all)"
    assert len(shown) <= limit + len(suffix)
    assert is_safe(shown)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # issue 11: invisible characters that are letters or marks by category
        ("hidden\ufe00\ufe0f\U000e0100\U000e01ef", "hidden\\ufe00\\ufe0f\\U000e0100\\U000e01ef"),
        ("filler\u3164\u115f\u1160\uffa0", "filler\\u3164\\u115f\\u1160\\uffa0"),
        (
            "cgj\u034f khmer\u17b4\u17b5 mongolian\u180b\u180f",
            "cgj\\u034f khmer\\u17b4\\u17b5 mongolian\\u180b\\u180f",
        ),
        ("visible \u00e9\u0301 \u2800", "visible \u00e9\u0301 \u2800"),  # marks that show stay
    ],
)
def test_default_ignorable_characters_are_escaped(raw: str, shown: str) -> None:
    assert display(raw) == shown
    assert is_safe(shown)


def test_display_line_never_cuts_inside_an_escape() -> None:
    text = "ab" + "\x1b" * 10
    assert display_line(text, limit=5) == "ab... (12 characters in all)"
    assert display_line(text, limit=6) == "ab\\x1b... (12 characters in all)"
    assert display_line("\U000e0041" * 3, limit=12) == "\\U000e0041... (3 characters in all)"
    assert display_line("\\x1b literally", limit=4) == "\\x1b... (14 characters in all)"


def test_display_of_a_block_keeps_line_breaks_and_tabs_only() -> None:
    block = "# Title\r\n\tcode\nover\rwrite\x1b[2K\u202e\r"
    assert display(block, lines=True) == "# Title\r\n\tcode\nover\\rwrite\\x1b[2K\\u202e\\r"
    assert display("plain\n", lines=True) == "plain\n"


@given(st.text(alphabet=st.characters(exclude_categories=())))
def test_a_displayed_block_has_no_unsafe_character_but_line_breaks(text: str) -> None:
    shown = display(text, lines=True)
    for line in shown.split("\n"):  # each line safe (lines joined could make a "##[" anew)
        assert is_safe(line.removesuffix("\r").replace("\t", " "))
    assert "\r" not in shown.replace("\r\n", "")
    assert shown.count("\n") == text.count("\n")


def test_display_json_is_exact_and_safe() -> None:
    document = {"description": "ok\u202e \x1b[8m\u2028 caf\u00e9 \ud800 \U0001f600", "n": [1, None]}
    text = display_json(document)
    assert json.loads(text) == document
    assert "caf\u00e9" in text
    assert "\\u202e" in text
    assert "\\u2028" in text
    assert "\\ud800" in text
    text.encode("utf-8")  # strict: the lone surrogate is escaped
    assert is_safe(text.replace("\n", ""))
    assert display_json({"a": "b"}) == '{\n  "a": "b"\n}'


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(st.characters(exclude_categories=())),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(st.characters(exclude_categories=())), inner, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_display_json_round_trips_anything(document: object) -> None:
    text = display_json(document)
    assert json.loads(text) == document
    assert is_safe(text.replace("\n", ""))
    text.encode("utf-8")


# --- CI runner commands: no output of ours is one (GitHub Actions' ``::`` and ``##[``) -------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("##[set-output name=approved;]yes", "##\\x5bset-output name=approved;]yes"),
        ("say ##[add-mask]secret", "say ##\\x5badd-mask]secret"),
        ("###[x]", "###\\x5bx]"),
        ("#\u0301#[x]", "#\u0301#\\x5bx]"),  # a mark between counts as nothing
        ("::stop-commands::pwned", "\\x3a:stop-commands::pwned"),
        ("  ::set-output name=approved::yes", "  \\x3a:set-output name=approved::yes"),
        ("\u3000\u00a0::add-mask::x", "\u3000\u00a0\\x3a:add-mask::x"),  # Unicode white space
        (":\u0301:x", "\\x3a\u0301:x"),
        ("\t::x", "\\t::x"),  # the tab is escaped: the line starts with a backslash
        ("::", "\\x3a:"),
        # what no runner obeys stays as it is
        ("a::b ::c", "a::b ::c"),
        (": :x", ": :x"),
        (":x", ":x"),
        (":", ":"),
        (" :\u0301", " :\u0301"),
        ("# #[x]", "# #[x]"),
        ("#[x] ## [y]", "#[x] ## [y]"),
        ("C# [docs](#usage)", "C# [docs](#usage)"),
    ],
)
def test_runner_commands_are_escaped(raw: str, shown: str) -> None:
    assert display(raw) == shown
    assert display_line(raw) == shown
    assert is_safe(shown)
    assert is_safe(raw) is (raw == shown)
    assert command_in(shown) is None


def test_a_block_escapes_commands_on_every_line() -> None:
    block = (
        "# Title\n::set-output name=x::y\r\n\t  ::add-mask::z\nsee ##[stop-commands]t\n#\t#[x]\n"
    )
    shown = display(block, lines=True)
    assert shown == (
        "# Title\n\\x3a:set-output name=x::y\r\n\t  \\x3a:add-mask::z\nsee ##\\x5bstop-commands]t\n"
        "#\t#\\x5bx]\n"
    )
    assert commands_in(shown) == []
    assert display("a ::b\n#\n#[c]", lines=True) == "a ::b\n#\n#[c]"  # nothing to escape


def test_display_json_escapes_the_legacy_command_and_stays_exact() -> None:
    document = {"description": "##[set-output name=approved;]yes", "::add-mask::k": ["#\u0301#["]}
    text = display_json(document)
    assert json.loads(text) == document
    assert '"##\\u005bset-output name=approved;]yes"' in text
    assert commands_in(text) == []
    assert commands_in(display_json(document, indent=None)) == []
    assert display_json({"a": "##"}) == '{\n  "a": "##"\n}'


def test_a_cut_line_stays_escaped() -> None:
    assert display_line("::" + "x" * 500, limit=10) == "\\x3a:xxxxx... (502 characters in all)"
    assert display_line("##[" * 200, limit=6) == "##\\x5b... (600 characters in all)"
    assert display_line("##[" * 200, limit=5) == "##... (600 characters in all)"


@given(commandish)
def test_no_output_of_display_is_a_runner_command(text: str) -> None:
    """Neither syntax, in any line of any form, even for a runner that skips marks."""
    for shown in (display(text), display_line(text), display_line(text, limit=7)):
        assert "##[" not in shown
        assert command_in(shown) is None, shown
        assert "\n" not in shown
    block = display(text, lines=True)
    assert commands_in(block) == [], block
    assert all(not line.lstrip().startswith("::") for line in block.split("\n"))


@given(
    st.recursive(
        st.none() | commandish,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(commandish, inner, max_size=3),
        max_leaves=8,
    ),
    st.sampled_from([None, 0, 2]),
)
def test_no_output_of_display_json_is_a_runner_command(
    document: object, indent: int | None
) -> None:
    text = display_json(document, indent=indent)
    assert json.loads(text) == document
    assert commands_in(text) == [], text


@given(commandish | st.text(st.characters(exclude_categories=())))
def test_is_safe_says_whether_display_changes_text_and_display_is_stable(text: str) -> None:
    shown = display(text)
    assert is_safe(text) is (shown == text)
    assert display(shown) == shown  # shown twice (diff does) is shown once
    assert is_safe(shown)
