"""What a CI runner obeys in a job's output (imported as ``ci_runner``; not a conftest).

A model of the GitHub Actions runner's two command syntaxes, as its ``ActionCommand`` parses a
line of output (``TryParseV2`` first, then ``TryParse``):

* ``::name props::data``: the line, with leading whitespace trimmed (.NET ``TrimStart``: Unicode
  white space, which Python's ``str.isspace`` covers), starts with ``::``;
* ``##[name props]data``: ``##[`` anywhere in the line.

Lines end at CR, LF or CR LF (.NET ``ReadLine``). The runner compares with ``StartsWith`` and
``IndexOf`` on strings, which may compare as a culture does and skip characters that weigh
nothing (marks, controls, format characters); the model is stricter than the runner: it also
looks at each line with those characters removed. The model says only whether a line *could*
be a command (it does not check the command's name), so it errs on the safe side.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import strategies as st

_LINE_END = re.compile(r"\r\n|\r|\n")
_WEIGHTLESS = {"Mn", "Mc", "Me", "Cc", "Cf"}


def lines_of(output: str) -> list[str]:
    """The lines a runner reads in ``output``."""
    return _LINE_END.split(output)


def _without_weightless(line: str) -> str:
    return "".join(c for c in line if unicodedata.category(c) not in _WEIGHTLESS)


def command_in(line: str) -> str | None:
    """The syntax (``"::"`` or ``"##["``) by which a runner could read ``line`` as a command."""
    for variant in (line, _without_weightless(line)):
        if variant.lstrip().startswith("::"):
            return "::"
        if "##[" in variant:
            return "##["
    return None


def commands_in(output: str) -> list[str]:
    """Every line of ``output`` a runner could read as a command."""
    return [line for line in lines_of(output) if command_in(line) is not None]


#: Pieces of runner commands and what may hide them (white space, marks, tabs, line ends).
PIECES = ("##[", "::", "#", "[", "]", ":", " ", "\t", "\n", "\r", "\u0301", "\u3000", "\u200b")

#: Text made of those pieces and any other characters: "##[" and "::" come up at once.
commandish = st.lists(st.sampled_from(PIECES) | st.characters(), max_size=30).map("".join)
