"""Which files and folders a filesystem source publishes: ignored names, hidden names, excludes.

Theory of operation
-------------------
A :class:`Selection` is asked about every name a walk meets and about every path a client asks
to read or list, so what is published and what is readable follow one rule. It is pure: it sees
names and ``/``-separated paths relative to a root, never the disk.

Three rules, checked in this order (the first that applies is the reason reported):

1. **Ignored** names are skipped whatever the options: :data:`DEFAULT_IGNORED_NAMES`
   (version-control metadata, bytecode caches, Finder litter), or the set the source was given.
2. **Hidden** names are skipped unless ``include_hidden`` is set. A name is hidden when it
   * starts with ``.`` (``.env``, ``.git``, ``.vscode``, ``.DS_Store``, Vim's swap file
     ``.notes.md.swp``, Emacs's lock ``.#notes.md``), or
   * ends with ``~`` (the backup file of Emacs, gedit, Kate: ``notes.md~``), or
   * starts and ends with ``#`` and is longer than one character (Emacs's autosave:
     ``#notes.md#``).
3. **Excluded** paths match one of the ``exclude`` patterns (globs).

Only names *below* a root are judged: a root itself is never hidden or excluded, so
``serve ./.claude/skills`` publishes what is in that folder.

**Names that look like secrets.** :func:`looks_secret` says whether a file name is one that
usually holds a key or a token: ``.env`` and ``.env.*`` (but not ``.env.example``, ``.sample``,
``.template`` or ``.dist``), ``*.pem``, ``*.key``, ``*.p12``, ``*.pfx``, the SSH private keys
``id_rsa``, ``id_dsa``, ``id_ecdsa`` and ``id_ed25519``, ``credentials*``, ``.netrc``,
``.pgpass`` and ``.pypirc`` (case-insensitive). It decides nothing about publishing: the
validation engine warns about such files whether they are published or passed over, since a
hidden ``.env`` is one ``--include-hidden`` away from being served.

**How exclude patterns match.** A pattern is matched against the path of a file or folder
relative to the root given (the root itself, when it is a skill folder; its own name is not part
of the path), with ``/`` between names, whatever the platform:

* ``*`` matches any run of characters except ``/`` (none included, a leading ``.`` included);
  ``?`` one character except ``/``; ``[abc]``, ``[a-z]`` one character of a set and ``[!abc]``
  one character not in it (never ``/``); there is no escape character (write ``[*]`` for a
  literal ``*``); matching is case-sensitive;
* ``**`` as a whole name matches any number of folders, none included (``**/tmp`` matches
  ``tmp`` and ``a/b/tmp``); at the end it matches everything inside (``drafts/**`` matches
  ``drafts/a.md`` and ``drafts/x/b.md``, not ``drafts`` itself); inside a name it is ``*``;
* a pattern with no ``/`` matches a name at any depth (``*.log``, ``node_modules``); a pattern
  with a ``/`` matches the whole path from the root (``drafts/*.md`` matches ``drafts/a.md`` but
  not ``x/drafts/a.md``); a leading ``/`` only says so (``/notes.md`` is the top-level file);
* a trailing ``/`` matches folders only (``build/``);
* a skipped folder is skipped with everything in it: nothing below it is looked at, published or
  readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, final

from .model import SkipCode

__all__ = ["DEFAULT_IGNORED_NAMES", "Selection", "is_hidden", "looks_secret"]

#: Names skipped everywhere, even with ``include_hidden``: version-control metadata, bytecode
#: caches, Finder litter.
DEFAULT_IGNORED_NAMES: Final = frozenset({".git", ".hg", ".svn", "__pycache__", ".DS_Store"})

#: Characters escaped inside a ``[...]`` set (``-`` stays a range; the rest would be special, or
#: draw a FutureWarning about set operations, in a Python regex set).
_SET_SPECIAL: Final = frozenset("\\^[]&~|")


def is_hidden(name: str) -> bool:
    """Whether ``name`` is hidden (see the module docstring): ``.x``, ``x~`` or ``#x#``."""
    first = name[:1]  # indexing, not method calls: a walk asks this of every name
    return first == "." or name[-1:] == "~" or (first == "#" and name[-1] == "#" and len(name) > 1)


_SECRET_NAMES: Final = frozenset(
    {".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".pgpass", ".pypirc"}
)
_SECRET_SUFFIXES: Final = (".pem", ".key", ".p12", ".pfx")
_TEMPLATE_SUFFIXES: Final = (".example", ".sample", ".template", ".dist")


def looks_secret(name: str) -> bool:
    """Whether the file name ``name`` looks like it holds a secret (see the module docstring)."""
    lower = name.lower()
    if lower in _SECRET_NAMES or lower.endswith(_SECRET_SUFFIXES):
        return True
    if lower.startswith(".env.") and not lower.endswith(_TEMPLATE_SUFFIXES):
        return True
    return lower.startswith("credentials")


def _segment(text: str) -> str:
    """The regex of one ``/``-free glob segment."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        i += 1
        if char == "*":
            while i < n and text[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            j = i + 1 if i < n and text[i] == "!" else i
            j = j + 1 if j < n and text[j] == "]" else j  # a ']' first is a member
            close = text.find("]", j)
            if close == -1:
                out.append(re.escape(char))
                continue
            members = text[i:close]
            negate = members.startswith("!")
            if negate:
                members = members[1:]
            body = "".join("\\" + m if m in _SET_SPECIAL else m for m in members)
            # Never '/', not even inside a range that spans it ('[--0]').
            out.append(f"[^/{body}]" if negate else f"(?!/)[{body}]")
            i = close + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def _translate(pattern: str) -> tuple[str, bool, bool]:
    """``(regex, whole path?, folders only?)`` of one exclude pattern."""
    folders_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    anchored = "/" in body
    names = body.lstrip("/").split("/")
    parts: list[str] = []
    for index, name in enumerate(names):
        last = index == len(names) - 1
        if name == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment(name) + ("" if last else "/"))
    return "".join(parts), anchored, folders_only


@final
class Selection:
    """The skipping rules of one source (see the module docstring).

    Example:
        >>> selection = Selection(exclude=["drafts/", "*.log"])
        >>> selection.skip("a", ".env", False), selection.skip("", "drafts", True)
        (<SkipCode.HIDDEN: 'hidden'>, <SkipCode.EXCLUDED: 'excluded'>)
        >>> selection.skip("x", "run.log", False), selection.skip("x", "ok.md", False)
        (<SkipCode.EXCLUDED: 'excluded'>, None)
    """

    __slots__ = ("_patterns", "_rules", "exclude", "ignore", "include_hidden")

    def __init__(
        self,
        *,
        include_hidden: bool = False,
        exclude: Iterable[str] = (),
        ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    ) -> None:
        """Skip ``ignore`` names always, hidden names unless ``include_hidden``, and ``exclude``.

        Raises:
            ValueError: a pattern is empty, or is not a valid glob (e.g. a reversed range).
        """
        self.include_hidden = bool(include_hidden)
        self.exclude = tuple(exclude)
        self.ignore = frozenset(ignore)
        # (pattern, compiled, whole path?, folders only?), one per pattern, for the reason; and
        # the same rules merged into at most four regexes, for the walk.
        self._patterns: list[tuple[str, re.Pattern[str], bool, bool]] = []
        merged: dict[tuple[bool, bool], list[str]] = {}
        for pattern in self.exclude:
            if not isinstance(pattern, str) or not pattern.strip("/"):
                raise ValueError(f"exclude pattern {pattern!r} is empty")
            regex, anchored, folders_only = _translate(pattern)
            try:
                compiled = re.compile(regex, re.DOTALL)
            except re.error as exc:
                raise ValueError(
                    f"exclude pattern {pattern!r} is not a valid glob: {exc}"
                ) from None
            self._patterns.append((pattern, compiled, anchored, folders_only))
            merged.setdefault((anchored, folders_only), []).append(regex)
        self._rules = tuple(
            (anchored, folders_only, re.compile("|".join(f"(?:{r})" for r in rules), re.DOTALL))
            for (anchored, folders_only), rules in merged.items()
        )

    def skip(self, folder: str, name: str, is_dir: bool) -> SkipCode | None:
        """Why the entry ``name`` in ``folder`` is skipped, or None when it is not.

        Args:
            folder: The path of the folder holding it, relative to the root, ``/``-separated
                (``""`` for the root itself).
            name: Its name.
            is_dir: Whether it is a folder.
        """
        if name in self.ignore:
            return SkipCode.IGNORED
        if not self.include_hidden and is_hidden(name):
            return SkipCode.HIDDEN
        for anchored, folders_only, rule in self._rules:
            if (is_dir or not folders_only) and rule.fullmatch(
                (f"{folder}/{name}" if folder else name) if anchored else name
            ):
                return SkipCode.EXCLUDED
        return None

    def skips_path(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the root) or a folder above it is skipped.

        ``""``, the root itself, never is.
        """
        folder = ""
        names = path.split("/") if path else []
        for depth, name in enumerate(names, 1):
            if self.skip(folder, name, is_dir or depth < len(names)) is not None:
                return True
            folder = f"{folder}/{name}" if folder else name
        return False

    def reason(self, code: SkipCode, folder: str, name: str, is_dir: bool) -> str:
        """One line saying why :meth:`skip` returned ``code`` for this entry."""
        if code is SkipCode.IGNORED:
            return "always skipped (version-control metadata, caches and system files)"
        if code is SkipCode.HIDDEN:
            return "hidden (its name starts with '.', ends with '~', or is '#...#')"
        path = f"{folder}/{name}" if folder else name
        return next(
            f"excluded by the pattern {pattern!r}"
            for pattern, compiled, anchored, folders_only in self._patterns
            if (is_dir or not folders_only) and compiled.fullmatch(path if anchored else name)
        )
