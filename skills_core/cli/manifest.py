"""``skills-core manifest``: the entries ``serve`` would publish, and why any are left out.

Theory of operation: one scan of the roots by the same source and catalog builder that ``serve``
uses, printed as text or, with ``--json``, as one JSON document (``skills``, ``omitted``,
``warnings``, ``problems``).
"""

from __future__ import annotations

import argparse
import sys

from skills_core.cli._common import EXIT_OK, open_source, print_json
from skills_core.validation import Finding

__all__ = ["run_manifest", "finding_json"]


def run_manifest(args: argparse.Namespace) -> int:
    """Run ``skills-core manifest``: print what ``serve`` would publish, and why not the rest."""
    source = open_source(args.roots)
    progress = sys.stderr.isatty()
    if progress:
        sys.stderr.write(f"skills-core: scanning {', '.join(args.roots)} ...")
        sys.stderr.flush()
    catalog = source.scan()
    if progress:
        sys.stderr.write(f"\rskills-core: scanned {len(catalog.skills)} skills.      \n")
    if args.json:
        document = {
            "skills": [skill.entry.to_json() for skill in catalog.skills],
            "omitted": [
                {"path": o.path, "uri": o.uri, "code": str(o.code), "reason": o.reason}
                for o in catalog.omitted
            ],
            "warnings": [
                {"uri": skill.entry.uri, **finding_json(f)}
                for skill in catalog.skills
                for f in catalog.findings(skill)
            ],
            "problems": [
                {"path": p.path, "code": str(p.code), "reason": p.reason} for p in catalog.problems
            ],
        }
        print_json(document)
        return EXIT_OK
    out = sys.stdout
    for skill in catalog.skills:
        entry = skill.entry
        what = (
            "dynamic"
            if entry.is_dynamic
            else f"{len(entry.resources)} files, {entry.total_size} bytes"
        )
        out.write(f"{entry.uri}  ({what})\n")
        for finding in catalog.findings(skill):
            out.write(f"    warning {finding.field or '/'}: {finding.message}\n")
    for omitted in catalog.omitted:
        where = omitted.uri or omitted.path
        out.write(f"omitted {where}: {omitted.reason}\n")
    for problem in catalog.problems:
        out.write(f"skipped {problem.path}: {problem.reason}\n")
    out.write(f"{len(catalog.skills)} skills published, {len(catalog.omitted)} left out\n")
    return EXIT_OK


def finding_json(finding: Finding) -> dict[str, object]:
    """The JSON form of a finding, as ``manifest`` and ``validate`` print it."""
    out: dict[str, object] = {
        "severity": str(finding.severity),
        "field": finding.field,
        "code": finding.code,
        "message": finding.message,
    }
    if finding.line is not None:
        out["line"] = finding.line
    return out
