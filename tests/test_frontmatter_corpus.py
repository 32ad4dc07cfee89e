"""The real-world corpus: a differential test against PyYAML, and no crash anywhere (SIL-09,
SIL-10, ENTRY-04, FMT-01, VER-10).

For every corpus SKILL.md whose frontmatter PyYAML's ``safe_load`` accepts, our value must equal
PyYAML's exactly (types and key order included), except where YAML 1.1 and the YAML 1.2 core
schema disagree; those files are listed one by one in :data:`YAML_1_1_EXCEPTIONS` with the reason,
and the test fails if the list is incomplete or stale. Every other file must fail with a
:class:`FrontmatterError` that carries a line number.
"""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from frontmatter_helpers import CORPUS_FILES, corpus_files, strict_equal

from skills_core.errors import FrontmatterError
from skills_core.frontmatter import parse_frontmatter, split_frontmatter
from skills_core.jsonvalue import JSONValue
from skills_core.validation import Finding, validate_skill_md

pytestmark = pytest.mark.skipif(
    not CORPUS_FILES.is_dir(),
    reason=f"the SKILL.md corpus is not at {CORPUS_FILES} (it ships beside the repository)",
)

#: Files where PyYAML and we disagree, and why. Each one is an unquoted date: YAML 1.1 resolves
#: ``2025-10-20`` to a timestamp (PyYAML builds ``datetime.date``), the YAML 1.2 core schema has
#: no timestamp type, so we keep the plain string (docs/design.md#d3). The value is the JSON
#: pointer of every field that differs and our string there.
YAML_1_1_EXCEPTIONS: dict[str, dict[str, str]] = {
    f"davila7__claude-code-templates/cli-tool/components/skills/business-marketing/{name}"
    "/SKILL.md": {"/metadata/updated": "2025-10-20"}
    for name in (
        "ceo-advisor",
        "content-creator",
        "cto-advisor",
        "marketing-demand-acquisition",
        "marketing-strategy-pmm",
    )
} | {
    "openclaw__skills/skills/alirezarezvani/content-creator/SKILL.md": {
        "/metadata/updated": "2025-10-20"
    },
    "openclaw__skills/skills/jbbottoms/chaos-lab/SKILL.md": {"/created": "2026-01-25"},
}


@dataclass(frozen=True, slots=True)
class Outcome:
    relative: str
    raw: bytes
    pyyaml: object  # PyYAML's value, or None when it fails (see pyyaml_ok)
    pyyaml_ok: bool
    ours: dict[str, JSONValue] | None
    error: FrontmatterError | None


def _pyyaml(raw: bytes) -> tuple[object, bool]:
    try:
        text, _ = split_frontmatter(raw)
    except FrontmatterError:
        return None, False  # no frontmatter to give PyYAML
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None, False
    return value, isinstance(value, dict)


@functools.cache
def outcomes() -> tuple[Outcome, ...]:
    out = []
    for path in corpus_files():
        raw = path.read_bytes()
        pyyaml, ok = _pyyaml(raw)
        try:
            ours: dict[str, JSONValue] | None = parse_frontmatter(raw).data
            error = None
        except FrontmatterError as exc:
            ours, error = None, exc
        relative = path.relative_to(CORPUS_FILES).as_posix()
        out.append(Outcome(relative, raw, pyyaml, ok, ours, error))
    return tuple(out)


def _at(value: object, pointer: str) -> object:
    for part in pointer.split("/")[1:]:
        assert isinstance(value, dict)
        value = value[part]
    return value


def _with_date_strings(value: object, pointers: dict[str, str]) -> object:
    """PyYAML's value with each listed date replaced by its ISO string."""
    for pointer, text in pointers.items():
        *parents, last = pointer.split("/")[1:]
        container = _at(value, "/" + "/".join(parents)) if parents else value
        assert isinstance(container, dict)
        assert isinstance(container[last], datetime.date)
        assert container[last].isoformat() == text
        container[last] = text
    return value


def test_corpus_is_the_documented_one() -> None:
    results = outcomes()
    assert len(results) == 4986
    assert sum(o.pyyaml_ok for o in results) == 4806
    assert sum(o.error is None for o in results) == 4806


def test_differential_against_pyyaml_on_the_whole_corpus() -> None:
    """ENTRY-04 / SIL-09: our YAML 1.2 reading equals PyYAML's, modulo the listed exceptions."""
    equal = 0
    differing: dict[str, str] = {}
    rejected_by_us: dict[str, str] = {}
    for o in outcomes():
        if not o.pyyaml_ok:
            continue
        if o.ours is None:
            rejected_by_us[o.relative] = str(o.error)
            continue
        if strict_equal(o.ours, o.pyyaml):
            equal += 1
        else:
            differing[o.relative] = repr(o.ours)[:200]
    assert rejected_by_us == {}, "PyYAML accepts these but we refuse them"
    assert set(differing) == set(YAML_1_1_EXCEPTIONS), "the exception list is stale or incomplete"
    for o in outcomes():
        pointers = YAML_1_1_EXCEPTIONS.get(o.relative)
        if pointers is not None:
            for pointer, text in pointers.items():
                assert _at(o.ours, pointer) == text
            assert strict_equal(o.ours, _with_date_strings(o.pyyaml, pointers))
    assert equal == 4806 - len(YAML_1_1_EXCEPTIONS) == 4799


def test_every_other_file_fails_with_a_located_error() -> None:
    """Files PyYAML refuses, or without (closed) frontmatter, raise FrontmatterError with a line."""
    failures = [o for o in outcomes() if not o.pyyaml_ok]
    assert len(failures) == 4986 - 4806 == 180
    kinds: dict[str, int] = {}
    for o in failures:
        assert o.ours is None, o.relative
        assert o.error is not None
        assert o.error.line is not None, o.relative
        assert o.error.line >= 1
        assert "\n" not in str(o.error)
        kinds[o.error.kind] = kinds.get(o.error.kind, 0) + 1
    # 127 files do not start with '---', 4 never close it; 49 have YAML that PyYAML refuses too:
    # 38 an unquoted ': ' inside a value, the rest broken flow collections, stray text after a
    # value, a C1 control character, and one flow sequence used as a mapping key ("unsupported").
    assert kinds == {"delimiter": 131, "syntax": 48, "unsupported": 1}


def test_no_corpus_file_crashes_the_validator() -> None:
    """FMT-01: the validator reports on every file and never raises."""
    errors = warnings = 0
    for o in outcomes():
        directory = Path(o.relative).parent.name
        findings = validate_skill_md(o.raw, directory_name=directory)
        assert isinstance(findings, tuple)
        assert all(isinstance(f, Finding) for f in findings)
        errors += any(f.severity == "error" for f in findings)
        warnings += any(f.severity == "warning" for f in findings)
    assert errors > 0
    assert warnings > 0
