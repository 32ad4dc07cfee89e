"""``skills-core validate``: lint skill folders (or JSON skill entries) the way a server and a host do.

Theory of operation: a folder is checked by the Agent Skills validators and by asking the same
source ``serve`` uses what it would publish; an entry is checked by
:meth:`~skills_core.entry.SkillEntry.from_json`, as a host checks what a server lists. Each subject
gets a report with its findings; the command exits 0 when every subject is valid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skills_core.cli._common import EXIT_OK, EXIT_USAGE, CliError, open_source, print_json
from skills_core.cli.manifest import finding_json
from skills_core.entry import DEFAULT_LIMITS, SkillEntry
from skills_core.errors import InvalidEntryError, SkillsError
from skills_core.jsonvalue import loads_strict
from skills_core.validation import Severity, validate_skill_md

__all__ = ["run_validate"]


def run_validate(args: argparse.Namespace) -> int:
    """Run ``skills-core validate``: lint folders or entries; exit 0 when all are valid."""
    if args.entries is None and not args.paths:
        raise CliError("validate: give PATH... or --entries FILE", EXIT_USAGE)
    reports: list[dict[str, object]] = []
    if args.entries is not None:
        reports.extend(_validate_entries(args.entries))
    for path in args.paths:
        reports.extend(_validate_path(path))
    ok = all(report["valid"] for report in reports)
    if args.json:
        print_json({"valid": ok, "results": reports})
    else:
        for report in reports:
            status = "ok" if report["valid"] else "INVALID"
            sys.stdout.write(f"{status:8} {report['subject']}\n")
            findings = report["findings"]
            assert isinstance(findings, list)
            for finding in findings:
                line = f" (line {finding['line']})" if "line" in finding else ""
                sys.stdout.write(
                    f"    {finding['severity']:7} {finding['field'] or '/'}: "
                    f"{finding['message']}{line}\n"
                )
    return EXIT_OK if ok else EXIT_USAGE


def _validate_entries(name: str) -> list[dict[str, object]]:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--entries {name}: {exc}", EXIT_USAGE) from None
    try:
        document: object = loads_strict(text)  # duplicate keys and NaN are refused, not resolved
    except ValueError as exc:
        raise CliError(f"--entries {name}: not JSON ({exc})", EXIT_USAGE) from None
    if isinstance(document, dict) and "skills" in document and "uri" not in document:
        document = document["skills"]
    if isinstance(document, dict) and "skill" in document and "uri" not in document:
        document = document["skill"]
    items = document if isinstance(document, list) else [document]
    reports: list[dict[str, object]] = []
    for index, item in enumerate(items):
        subject = f"{name}[{index}]"
        uri = item.get("uri") if isinstance(item, dict) else None
        if isinstance(uri, str):
            subject = f"{subject} {uri}"
        try:
            SkillEntry.from_json(item, limits=DEFAULT_LIMITS)
        except InvalidEntryError as exc:
            findings = [
                {
                    "severity": "error",
                    "field": p.pointer,
                    "code": p.code,
                    "message": p.message,
                }
                for p in exc.problems
            ]
            reports.append({"subject": subject, "valid": False, "findings": findings})
        else:
            reports.append({"subject": subject, "valid": True, "findings": []})
    return reports


def _validate_path(path_text: str) -> list[dict[str, object]]:
    path = Path(path_text)
    if path.is_file():
        if path.name != "SKILL.md":
            raise CliError(f"{path_text}: not a SKILL.md file or a folder", EXIT_USAGE)
        path = path.parent
    if not path.is_dir():
        raise CliError(f"{path_text}: no such folder", EXIT_USAGE)
    if (path / "SKILL.md").is_file():
        return [_validate_skill_folder(path)]
    source = open_source([str(path)])
    catalog = source.scan()
    reports: list[dict[str, object]] = []
    folders = {skill.folder for skill in catalog.skills} | {o.path for o in catalog.omitted}
    for folder in sorted(folders):
        reports.append(_validate_skill_folder(path / folder if folder else path))
    if not reports:
        raise CliError(f"{path_text}: no SKILL.md found", EXIT_USAGE)
    return reports


def _validate_skill_folder(folder: Path) -> dict[str, object]:
    """All Agent Skills findings for one folder, plus what the server would decide about it."""
    from skills_core.server.filesystem import FilesystemSource  # noqa: PLC0415
    from skills_core.server.model import OmittedSkill, PublishedSkill  # noqa: PLC0415
    from skills_core.uri import encode_path_segment  # noqa: PLC0415

    folder = folder.resolve()
    findings: list[dict[str, object]] = []
    try:
        data = (folder / "SKILL.md").read_bytes()
    except OSError as exc:
        return {
            "subject": str(folder),
            "valid": False,
            "findings": [
                {"severity": "error", "field": "", "code": "unreadable", "message": str(exc)}
            ],
        }
    findings.extend(finding_json(f) for f in validate_skill_md(data, directory_name=folder.name))
    verdict: PublishedSkill | OmittedSkill | None = None
    try:
        source = FilesystemSource([folder])  # a root that is a skill: published under its name
        verdict = source.recheck(f"skill://{encode_path_segment(folder.name)}/SKILL.md")
    except (OSError, SkillsError, ValueError) as exc:
        findings.append(
            {"severity": "error", "field": "", "code": "unservable", "message": str(exc)}
        )
    subject = str(folder)
    if isinstance(verdict, PublishedSkill):
        entry = verdict.entry
        subject = f"{folder} ({len(entry.resources)} files, {entry.total_size} bytes)"
        known = {(f["code"], f["message"]) for f in findings}
        for finding in verdict.findings:
            item = finding_json(finding)
            if (item["code"], item["message"]) not in known:
                findings.append(item)
    elif isinstance(verdict, OmittedSkill) and not any(f["severity"] == "error" for f in findings):
        findings.append(
            {
                "severity": "error",
                "field": "",
                "code": str(verdict.code),
                "message": verdict.reason,
            }
        )
    valid = not any(f["severity"] == Severity.ERROR for f in findings)
    return {"subject": subject, "valid": valid, "findings": findings}
