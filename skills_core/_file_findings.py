"""Findings about a skill's files rather than its frontmatter: hidden and secret-looking names, the
links and the length of SKILL.md's body.

Theory of operation: :mod:`skills_core.check` calls these for each skill folder (and each entry)
it reports on. :func:`skipped_findings` turns what the walk passed over into a ``hidden-file``
note, or a ``secret-file`` warning for a name that looks like a secret
(:func:`skills_core.server.selection.looks_secret`); :func:`published_findings` warns about
published files with such names and adds :func:`skills_core.validation.lint_body`'s findings;
:func:`published_secrets` does the same for an entry's files. Pure: no I/O (paths on disk are
made by the caller's ``path_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from .entry import SkillEntry
from .server.model import PublishedSkill, SkipCode, SkippedEntry
from .server.selection import looks_secret
from .uri import percent_decode
from .validation import Finding, Severity, lint_body

__all__ = ["skipped_findings", "published_findings", "published_secrets"]


def skipped_findings(
    path_of: Callable[[str], str], skipped: Iterable[SkippedEntry]
) -> list[Finding]:
    """A note for each hidden entry passed over, a warning for each that looks like a secret.

    Args:
        path_of: The path on disk of a catalog path.
        skipped: What the walk passed over in one skill folder.
    """
    findings: list[Finding] = []
    for entry in skipped:
        name = entry.path.rpartition("/")[2]
        file = path_of(entry.path)
        if looks_secret(name):
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    field="",
                    code="secret-file",
                    message=f"{name!r} looks like a secret; it is not published now "
                    f"({entry.code}), but it sits in the skill folder, where --include-hidden, "
                    "another --exclude or a copy of the folder would publish it: move it out",
                    file=file,
                )
            )
        elif entry.code is SkipCode.HIDDEN:
            findings.append(
                Finding(
                    severity=Severity.NOTE,
                    field="",
                    code="hidden-file",
                    message=f"not published: {entry.reason}; --include-hidden publishes it",
                    file=file,
                )
            )
    return findings


def published_findings(
    path_of: Callable[[str], str], skill: PublishedSkill, skill_md: bytes | None
) -> list[Finding]:
    """What a published skill's own files and body say: secrets published, links, length.

    Args:
        path_of: The path on disk of a path relative to the skill folder (``/``-separated).
        skill: The skill as the catalog publishes it.
        skill_md: Its SKILL.md bytes, when read.
    """
    findings = [
        Finding(
            severity=Severity.WARNING,
            field="",
            code="secret-file",
            message=f"{relative.rpartition('/')[2]!r} looks like a secret and is published with "
            "the skill: move it out of the skill folder",
            file=path_of(relative),
        )
        for relative in skill.files.values()
        if looks_secret(relative.rpartition("/")[2])
    ]
    if skill_md is not None:
        body = lint_body(skill_md, frozenset(skill.files.values()), skill_uri=skill.uri)
        findings += [replace(f, file=path_of(f.file)) if f.file is not None else f for f in body]
    return findings


def published_secrets(entry: SkillEntry) -> list[Finding]:
    """``secret-file`` for each file of the entry whose name looks like a secret."""
    if isinstance(entry.resources, str):
        return []
    findings: list[Finding] = []
    for index, resource in enumerate(entry.resources):
        name = percent_decode(resource.uri.rpartition("/")[2])
        if looks_secret(name):
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    field=f"/resources/{index}/uri",
                    code="secret-file",
                    message=f"{name!r} looks like a secret and is published with the skill",
                )
            )
    return findings
