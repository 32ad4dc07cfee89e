"""Validate a skill entry (or a skills/list result) and show what a host would check.

Usage::

    PYTHONPATH=. python3 examples/validate_entry.py              # the spec's pdf-processing example
    PYTHONPATH=. python3 examples/validate_entry.py entry.json   # your own entry or listing

Exits 0 when every entry is valid, 1 otherwise. Uses only the standard library.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import skills_core as sc
from skills_core import spec_examples as ex


def main(argv: list[str]) -> int:
    """Validate the entries given on the command line (or the spec's example) and print a report."""
    if len(argv) > 1:
        document = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        entries = document.get("skills", [document]) if isinstance(document, dict) else [document]
    else:
        entries = [ex.entry_json(), ex.entry_json(with_credit_note=True)]
    ok = True
    for obj in entries:
        try:
            entry = sc.SkillEntry.from_json(obj)
        except sc.EntryOverLimitError as exc:
            ok = False
            print(f"OVER LIMIT  {exc}")
            continue
        except sc.InvalidEntryError as exc:
            ok = False
            print(f"INVALID     {exc.uri or '(no uri)'}")
            for problem in exc.problems:
                print(f"    {problem.pointer or '/'}: {problem.message}")
            continue
        kind = (
            "dynamic"
            if entry.is_dynamic
            else f"{len(entry.resources)} files, {entry.total_size} bytes"
        )
        print(f"VALID       {entry.uri}  ({entry.name}: {kind})")
    if len(argv) <= 1:
        print()
        print("Verifying the spec's example files against the entry (size first, then digest):")
        entry = sc.SkillEntry.from_json(ex.entry_json(with_credit_note=True))
        for path, data in ex.FILES_WITH_CREDIT_NOTE.items():
            resource = entry.resource(f"skill://pdf-processing/{path}")
            assert resource is not None
            sc.verify_bytes(data, size=resource.size, digest=resource.digest, uri=resource.uri)
            print(f"    ok  {resource.uri}  {resource.size:>4} bytes  {resource.digest[:19]}...")
        print()
        print("Resolving references against the skill root:")
        for ref in (
            "templates/invoice.md",
            "./templates/../SKILL.md",
            "../other/SKILL.md",
            "%2e%2e/x",
            "/etc/passwd",
            "file:///etc/passwd",
        ):
            try:
                print(f"    {ref!r:28} -> {sc.resolve_reference(ex.SKILL_MD_URI, ref)}")
            except sc.URIError as exc:
                print(f"    {ref!r:28} refused ({exc.kind})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
