"""The repository explains itself: every rule, decision and section the code cites lives in docs/.

* every requirement ID cited in the code, the tests, the examples and the README is a rule of
  docs/requirements.md;
* every MUST and MUST NOT rule is checked by at least one test (a test that names its ID; see
  ``scripts/traceability`` for what counts);
* docs/traceability.md is what ``scripts/traceability`` would write;
* every link into docs/ with an anchor, anywhere in the repository, lands on a heading or an
  explicit anchor of that page;
* nothing cites a document that is not in the repository.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCRIPT = ROOT / "scripts" / "traceability"

#: Directory names never scanned: tool caches, virtual environments, Node packages.
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".conformance",
    "build",
    "dist",
}

#: Upper-case prefixes that look like an ID but are not a rule family (``SHA-256``, ``UTF-16``).
NOT_RULE_FAMILIES = {"SHA", "UTF"}

#: MUST rows that no test names yet, and why. Each is an expected failure of
#: ``test_every_must_rule_is_checked_by_a_test`` (strict: naming the rule in a test makes it pass,
#: and the entry must then go).
KNOWN_UNTESTED: dict[str, str] = {}


@cache
def traceability() -> ModuleType:
    """Import ``scripts/traceability`` (a script without a ``.py`` suffix) as a module."""
    loader = importlib.machinery.SourceFileLoader("_traceability", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = module  # dataclasses look their module up while the class is built
    loader.exec_module(module)
    return module


@cache
def collected() -> tuple[dict[str, Any], dict[str, Any]]:
    """The rules and their citations, computed once for the whole module."""
    rules, citations = traceability().collect(ROOT)
    return rules, citations


def cited_files() -> list[Path]:
    """The files whose citations must resolve: the library, the tests, the examples, the README."""
    files = [ROOT / "README.md"]
    for top in ("skills_core", "tests", "examples"):
        files += [
            path
            for path in sorted((ROOT / top).rglob("*"))
            if path.suffix in {".py", ".mjs", ".md"}
            and not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts)
        ]
    return files


def text_files(top: Path) -> Iterator[Path]:
    """Every text file under ``top``, skipping caches, environments and binary files."""
    for path in sorted(top.rglob("*")):
        if not path.is_file() or SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        yield path


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)


# --- the citation parser itself ----------------------------------------------------------------


def test_citations_are_found_in_every_spelling() -> None:
    tr = traceability()
    families = ["VER", "SEC", "HTTP", "SIL"]
    text = "VER-09; SEC-02/04/06 and HTTP-10..12, SIL-09..SIL-11, VER-01…03 (not VER-1 or SHA-256)"
    assert tr.cited_ids(text, families) == {
        "VER-09",
        "SEC-02",
        "SEC-04",
        "SEC-06",
        "HTTP-10",
        "HTTP-11",
        "HTTP-12",
        "SIL-09",
        "SIL-10",
        "SIL-11",
        "VER-01",
        "VER-02",
        "VER-03",
    }
    # A range across families, or a backwards one, cites only its ends.
    assert tr.cited_ids("VER-04..SIL-06, HTTP-12..10", families) == {
        "VER-04",
        "SIL-06",
        "HTTP-12",
        "HTTP-10",
    }
    assert tr.ids_in_name("test_load_order_VER_04_SIL_34", families) == {"VER-04", "SIL-34"}
    assert tr.ids_in_name("test_MAX_VER_3_and_XVER_04", families) == set()


def test_every_rule_has_a_strength_from_the_legend() -> None:
    rules = traceability().read_rules(ROOT)
    legend = {
        "MUST",
        "MUST NOT",
        "SHOULD",
        "SHOULD NOT",
        "MAY",
        "definition",
        "choice",
        "recommended",
        "cross-reference",
    }
    assert rules, "docs/requirements.md defines no rules"
    assert {rule.strength for rule in rules.values()} <= legend
    assert all(rule.strength == "choice" for rule in rules.values() if rule.family == "SIL")


def test_every_choice_says_why() -> None:
    text = (DOCS / "requirements.md").read_text(encoding="utf-8")
    entries = re.split(r"^### ", text, flags=re.MULTILINE)
    missing = [e.split("\n", 1)[0] for e in entries if e.startswith("SIL-") and "Why:" not in e]
    assert not missing, f"SIL rows that do not say why we chose: {missing}"


# --- (a) cited IDs are defined -----------------------------------------------------------------


def test_every_cited_id_is_defined() -> None:
    tr = traceability()
    rules = tr.read_rules(ROOT)
    families = tr.families_of(rules)
    candidate = re.compile(r"\b([A-Z][A-Z0-9]{1,6})-(\d{2,3})(?![\d-])")
    undefined = []
    for path in cited_files():
        for number, line in numbered_lines(path):
            ids = tr.cited_ids(line, families) | tr.ids_in_name(line, families)
            ids |= {
                f"{family}-{n}"
                for family, n in candidate.findall(line)
                if family not in NOT_RULE_FAMILIES
            }
            undefined += [
                f"{path.relative_to(ROOT)}:{number}: {rule_id}"
                for rule_id in sorted(ids - rules.keys())
            ]
    assert not undefined, "IDs cited but not defined in docs/requirements.md:\n" + "\n".join(
        undefined
    )


# --- (b) every MUST row has a test -------------------------------------------------------------


def _must_rules() -> list[object]:
    rules = traceability().read_rules(ROOT)
    return [
        pytest.param(
            rule_id,
            marks=pytest.mark.xfail(strict=True, reason=KNOWN_UNTESTED[rule_id]),
        )
        if rule_id in KNOWN_UNTESTED
        else rule_id
        for rule_id, rule in rules.items()
        if rule.is_must
    ]


@pytest.mark.parametrize("rule_id", _must_rules())
def test_every_must_rule_is_checked_by_a_test(rule_id: str) -> None:
    cited = collected()[1].get(rule_id)
    tests = cited.tests if cited is not None else set()
    assert tests, (
        f"{rule_id} is a MUST row no test names (add its ID to a test's name or docstring)"
    )


def test_known_untested_rules_are_must_rules() -> None:
    rules = traceability().read_rules(ROOT)
    assert all(rules[rule_id].is_must for rule_id in KNOWN_UNTESTED)


# --- (c) the traceability page is up to date ---------------------------------------------------


def test_traceability_page_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


# --- (d) links into docs/ resolve --------------------------------------------------------------


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*?|_(?=\w)|(?<=\w)_", "", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link shows only its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page: one per heading (duplicates numbered), and explicit ids."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            slug = github_slug(heading.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
        found.update(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", line))
    return found


def test_slugs_follow_github() -> None:
    assert github_slug("VER-09") == "ver-09"
    assert github_slug("DIR: resources/directory/read") == "dir-resourcesdirectoryread"
    assert github_slug("Decision 10: HTTP is an edge, like stdio") == (
        "decision-10-http-is-an-edge-like-stdio"
    )
    assert github_slug("The `host` command's *exit* codes") == "the-host-commands-exit-codes"


def test_links_into_docs_resolve() -> None:
    pages = {page.name: anchors(page) for page in sorted(DOCS.glob("*.md"))}
    assert {"requirements.md", "design.md", "traceability.md"} <= pages.keys()
    anywhere = re.compile(r"\bdocs/([A-Za-z0-9_.-]+\.md)#([\w-]+)")
    within = re.compile(r"\]\(([A-Za-z0-9_.-]+\.md)?#([\w-]+)\)")
    broken = []
    for path in text_files(ROOT):
        where = path.relative_to(ROOT)
        for number, line in numbered_lines(path):
            links = anywhere.findall(line)
            if where.parts[0] == "docs":
                links += [(name or path.name, anchor) for name, anchor in within.findall(line)]
            broken += [
                f"{where}:{number}: docs/{name}#{anchor}"
                for name, anchor in links
                if anchor not in pages.get(name, set())
            ]
    assert not broken, "links to a missing page or anchor:\n" + "\n".join(broken)


def test_relative_page_links_in_docs_resolve() -> None:
    missing = [
        f"{page.name}: {target}"
        for page in sorted(DOCS.glob("*.md"))
        for target in re.findall(r"\]\(([A-Za-z0-9_.-]+\.md)(?:#[\w-]+)?\)", page.read_text())
        if not (DOCS / target).exists()
    ]
    assert not missing


# --- (e) no citation leaves the repository -----------------------------------------------------

#: What a citation of a document outside the repository looks like. ``../shared/corpus`` is test
#: data that tests may read when it is beside the checkout (design.md, decision 14), not a document.
RULES_REGISTRY = ROOT / "skills_core" / "rules.py"
OUTSIDE = re.compile(
    r"\.\./shared(?!/corpus)"
    r"|\bDESIGN\.md|\bSTYLE\.md"
    r"|\bskills-extension(?:-overview)?\.md|\bhttp-transport\.md|\bbase-protocol(?:\.md)?\b"
    r"|(?<![\w/.-])requirements\.md"
)


def test_nothing_cites_a_document_outside_the_repository() -> None:
    files = [path for path in cited_files() if path != Path(__file__)]
    files += sorted(DOCS.glob("*.md"))
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in numbered_lines(path)
        for match in OUTSIDE.finditer(line)
        # docs/ pages link to each other by bare name: requirements.md there is our own page, and
        # so it is in the rule registry, which writes docs/rules.md's links
        if not (
            (path.parent == DOCS or path == RULES_REGISTRY) and match.group() == "requirements.md"
        )
    ]
    assert not found, "citations of documents outside the repository:\n" + "\n".join(found)
