"""The examples in examples/ run and do what the README says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from skills_core import spec_examples as ex

ROOT = Path(__file__).resolve().parents[1]


def run_example(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "validate_entry.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_validate_entry_example_on_the_spec_entry() -> None:
    result = run_example()
    assert result.returncode == 0, result.stderr
    assert (
        "VALID       skill://pdf-processing/SKILL.md  (pdf-processing: 3 files, 215 bytes)"
        in result.stdout
    )
    assert "refused (escapes-root)" in result.stdout


def test_validate_entry_example_on_a_bad_listing(tmp_path: Path) -> None:
    bad = ex.entry_json()
    bad["resources"] = "DYNAMIC"
    listing = tmp_path / "listing.json"
    listing.write_text(json.dumps({"skills": [ex.entry_json(), bad]}), encoding="utf-8")
    result = run_example(str(listing))
    assert result.returncode == 1
    assert "INVALID     skill://pdf-processing/SKILL.md" in result.stdout
    assert "/resources: 'resources' must be an array" in result.stdout
