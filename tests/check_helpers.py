"""Helpers shared by the validation-engine tests (imported as ``check_helpers``; not a conftest).

* :func:`write_tree` writes ``{relative path: bytes}`` below a folder;
* :func:`spec_entry` is the spec's ``pdf-processing`` entry as JSON, typed loosely so that a test
  can edit it in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skills_core import spec_examples as ex


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    """Write each file below ``root`` (folders made as needed); return ``root``."""
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def spec_entry(*, with_credit_note: bool = False) -> Any:
    """The spec's entry for ``pdf-processing`` (after the credit-note change, if asked) as JSON."""
    return ex.entry_json(with_credit_note=with_credit_note)
