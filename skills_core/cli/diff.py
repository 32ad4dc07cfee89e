"""``skills-core diff OLD NEW``: what changed between two skills, as hosts would see it.

Theory of operation: each side becomes the entries a host would see. A folder (a skill folder, its
``SKILL.md``, or a root of skills) gives the entries ``serve`` publishes for it
(:func:`skills_core.check.validate_folder`); a skill it would not publish is left out and said so
on stderr. A JSON file gives the entries it holds (:func:`skills_core.check.entries_in`: an entry,
a list, a ``skills/list`` or ``skills/get`` result, a whole JSON-RPC response), each of which must
be well-formed (:meth:`SkillEntry.from_json`, without limits: a diff compares, it does not load).

When each side has exactly one entry, the two are compared whatever their URIs (a skill that
moved). Otherwise entries are paired by URI: unpaired ones are added or removed skills, pairs are
compared with :func:`skills_core.check.compare_entries` (frontmatter field by field in old/new
wording, files added, removed and changed, with sizes).

Output is text (every line, with the folder- or server-controlled strings in it, through
:func:`skills_core.display.display`) or, with ``--json``, one JSON document
(:func:`skills_core.display.display_json`: exact, strict UTF-8). Neither can carry a workflow
command a CI runner would obey. Exit 0 when nothing differs, 1 when something does, 2 on a usage
or I/O error, as diff(1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import cast, final

from ..check import (
    ChangeKind,
    EntryComparison,
    FieldChange,
    FileChange,
    compare_entries,
    entries_in,
    validate_folder,
)
from ..display import display, display_line
from ..entry import SkillEntry
from ..errors import InvalidEntryError, JsonRpcError
from ..jsonvalue import FrozenJSON, JSONValue, thaw_json
from ..spec import SKILL_MD
from ._common import CliError, error, os_message, print_json
from .validate import (
    EXIT_INVALID,
    EXIT_TROUBLE,
    EXIT_VALID,
    plural,
    read_json_documents,
)

__all__ = ["run_diff"]

#: Characters of a frontmatter value shown in text output (the whole value is in ``--json``).
_VALUE_LIMIT = 100


@final
@dataclass(frozen=True, slots=True)
class _Pair:
    """One skill on either side: compared, added or removed."""

    old: SkillEntry | None
    new: SkillEntry | None
    comparison: EntryComparison | None

    @property
    def status(self) -> str:
        if self.comparison is None:
            return "added" if self.old is None else "removed"
        return "same" if self.comparison.same else "changed"


def run_diff(args: argparse.Namespace) -> int:
    """Run ``skills-core diff OLD NEW`` (see the module docstring); return the exit code."""
    old = _entries(args.old, args)
    new = _entries(args.new, args)
    pairs = _pair(old, new)
    differ = any(pair.status != "same" for pair in pairs)
    if args.json:
        document = {"same": not differ, "skills": [_pair_json(pair) for pair in pairs]}
        print_json(document)
    else:
        sys.stdout.write("".join(display(line) + "\n" for line in _text(pairs)))
    return EXIT_INVALID if differ else EXIT_VALID


def _entries(path: str, args: argparse.Namespace) -> list[SkillEntry]:
    """The entries a host would see for one side (see the module docstring)."""
    if os.path.isdir(path) or os.path.basename(path) == SKILL_MD:
        try:
            report = validate_folder(path, include_hidden=args.include_hidden, exclude=args.exclude)
        except OSError as exc:
            raise CliError(os_message(exc), EXIT_TROUBLE) from None
        if not report.skills:
            raise CliError(
                f"{path}: no skill found (no folder at or below it holds a SKILL.md)", EXIT_TROUBLE
            )
        for skill in report.skills:
            if skill.entry is None:
                first = skill.errors[0]
                error(f"{skill.path}: not published ({first.code}: {first.message})")
        return [skill.entry for skill in report.skills if skill.entry is not None]
    entries: list[SkillEntry] = []
    for source, document in read_json_documents(path):
        try:
            items = entries_in(document)
        except JsonRpcError as exc:
            raise CliError(f"{source}: {exc.message}", EXIT_TROUBLE) from None
        for index, item in enumerate(items):
            try:
                entries.append(SkillEntry.from_json(item, limits=None))
            except InvalidEntryError as exc:
                raise CliError(f"{source}[{index}]: {exc.message}", EXIT_TROUBLE) from None
    return entries


def _pair(old: list[SkillEntry], new: list[SkillEntry]) -> list[_Pair]:
    if len(old) == 1 and len(new) == 1:
        return [_Pair(old[0], new[0], compare_entries(old[0], new[0]))]
    before = {entry.uri: entry for entry in old}
    after = {entry.uri: entry for entry in new}
    pairs: list[_Pair] = []
    for uri in sorted(before.keys() | after.keys()):
        was = before.get(uri)
        now = after.get(uri)
        comparison = compare_entries(was, now) if was is not None and now is not None else None
        pairs.append(_Pair(was, now, comparison))
    return pairs


# --- text -------------------------------------------------------------------------------------


def _text(pairs: list[_Pair]) -> list[str]:
    lines: list[str] = []
    counts = dict.fromkeys(("changed", "added", "removed", "same"), 0)
    for pair in pairs:
        counts[pair.status] += 1
        comparison = pair.comparison
        if comparison is None:
            entry = pair.new or pair.old
            assert entry is not None
            lines.append(f"{pair.status:8} {entry.uri} ({_size(entry)})")
            continue
        uri = comparison.new_uri
        if comparison.old_uri != comparison.new_uri:
            uri = f"{comparison.old_uri} -> {comparison.new_uri}"
        lines.append(f"{pair.status:8} {uri}")
        if comparison.old_dynamic != comparison.new_dynamic:
            lines.append(
                "  resources: "
                + ("dynamic -> a manifest" if comparison.old_dynamic else "a manifest -> dynamic")
            )
        lines.extend(_field_line(change) for change in comparison.frontmatter)
        lines.extend(_file_line(change) for change in comparison.files)
    lines.append(
        f"{counts['changed']} changed, {counts['added']} added, {counts['removed']} removed, "
        f"{counts['same']} the same"
    )
    return lines


def _size(entry: SkillEntry) -> str:
    if entry.is_dynamic:
        return "dynamic"
    return f"{plural(len(entry.resources), 'file')}, {plural(entry.total_size, 'byte')}"


def _value(value: object) -> str:
    """A frontmatter value as JSON text, shown safely and cut (the whole value is in --json)."""
    text = json.dumps(thaw_json(cast(FrozenJSON, value)), ensure_ascii=False)  # an entry's value
    return display_line(text, _VALUE_LIMIT)


def _field_line(change: FieldChange) -> str:
    if change.change is ChangeKind.ADDED:
        return f"  frontmatter {change.pointer} added: {_value(change.new)}"
    if change.change is ChangeKind.REMOVED:
        return f"  frontmatter {change.pointer} removed (was {_value(change.old)})"
    return f"  frontmatter {change.pointer} changed: {_value(change.old)} -> {_value(change.new)}"


def _file_line(change: FileChange) -> str:
    if change.change is ChangeKind.ADDED:
        return f"  file {change.path} added ({change.new_size} bytes)"
    if change.change is ChangeKind.REMOVED:
        return f"  file {change.path} removed (was {change.old_size} bytes)"
    if change.old_size == change.new_size:
        return f"  file {change.path} changed ({change.new_size} bytes, other content)"
    return f"  file {change.path} changed ({change.old_size} -> {change.new_size} bytes)"


# --- JSON -------------------------------------------------------------------------------------


def _pair_json(pair: _Pair) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {"status": pair.status}
    if pair.comparison is not None:
        out.update(pair.comparison.to_json())
        return out
    entry = pair.new or pair.old
    assert entry is not None
    out["uri"] = entry.uri
    return out
