"""A CI step built on the validation engine: check skill folders, write SARIF, say what changed.

Usage::

    PYTHONPATH=. python3 examples/ci_check.py SKILLS_DIR [--sarif OUT.sarif] [--baseline OLD_DIR]

* every skill under ``SKILLS_DIR`` is checked exactly as ``skills-core serve`` would read it;
  findings are printed as ``file:line:column: severity[code] message`` (or, under GitHub Actions,
  as workflow annotations on the lines they concern);
* ``--sarif`` writes a SARIF 2.1.0 log for code scanning (``github/codeql-action/upload-sarif``);
* ``--baseline`` compares the entries ``serve`` would publish now with those of another checkout
  (``git worktree add ../base origin/main``), so a reviewer sees which skills a merge changes.

Exits 1 when a finding is an error, else 0. Uses only the standard library and skills_core.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import skills_core as sc
from skills_core.ci import github_commands, to_sarif
from skills_core.display import display


def main(argv: list[str]) -> int:
    """Check the folder, write what was asked for, return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("skills", help="a folder of skills (or one skill folder)")
    parser.add_argument("--sarif", help="write a SARIF 2.1.0 log here")
    parser.add_argument("--baseline", help="a folder of skills to compare with")
    args = parser.parse_args(argv)

    report = sc.validate_folder(args.skills)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # workflow commands on purpose, printed as they are: each is made of displayed text
        lines = github_commands(report, base=os.getcwd())
    else:
        lines = [  # file names and frontmatter values are the folder's, not ours: displayed
            display(f"{f.file}:{f.line or 1}:{f.column or 1}: {f.severity}[{f.code}] {f.message}")
            for _, f in report.all_findings()
        ]
    for line in lines:
        print(line)
    counts = report.summary()
    print(f"{counts['skills']} skills, {counts['errors']} errors, {counts['warnings']} warnings")

    if args.sarif:
        with open(args.sarif, "w", encoding="utf-8") as out:
            json.dump(to_sarif(report, base=os.getcwd()), out, indent=2, ensure_ascii=False)

    if args.baseline:
        baseline = sc.validate_folder(args.baseline)
        before = {s.entry.uri: s.entry for s in baseline.skills if s.entry is not None}
        after = {s.entry.uri: s.entry for s in report.skills if s.entry is not None}
        for uri in sorted(before.keys() | after.keys()):
            old, new = before.get(uri), after.get(uri)
            if old is None or new is None:
                print(display(f"{'added' if old is None else 'removed'}: {uri}"))
                continue
            comparison = sc.compare_entries(old, new)
            for field in comparison.frontmatter:
                print(display(f"changed: {uri} frontmatter {field.pointer} ({field.change})"))
            for file in comparison.files:
                size = file.old_size if file.new_size is None else file.new_size
                print(display(f"changed: {uri} file {file.path} ({file.change}, {size} bytes)"))
    return 0 if report.valid else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
