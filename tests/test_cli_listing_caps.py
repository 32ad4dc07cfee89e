"""Large catalogs: a host reads a listing whole up to its entry and byte caps, and says plainly
when it did not (WG-05, SIL-17, LIST-05).

Real processes: ``skills-core host`` against ``skills-core serve`` over stdio. The host's default
has no page cap of its own (a server's page size never shortens a listing); when a cap or budget
stops a listing, stderr carries a warning naming the option that raises it, ``list --json`` says
``complete: false``, and an action naming a skill past the cut fails (exit 1) saying why. A server
whose catalog is past what a default host reads says so when it starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from client_helpers import run

from skills_core.cli import build_parser
from skills_core.host import HostPolicy
from skills_core.host.budgets import listing_overflow
from skills_core.server.options import DEFAULT_PAGE_SIZE, DEFAULT_TTL_MS

SERVE = f"{sys.executable} -m skills_core serve"


def catalog(root: Path, count: int) -> Path:
    """``count`` one-file skills, a hundred to a team folder."""
    for index in range(count):
        folder = root / f"team{index // 100}" / f"s{index}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(
            f"---\nname: s{index}\ndescription: skill {index}\n---\nbody\n".encode()
        )
    return root


@pytest.fixture(scope="module")
def three_thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return catalog(tmp_path_factory.mktemp("catalog"), 3_000)


def test_a_default_host_lists_3000_skills_in_pages_of_50_whole_WG_05(
    three_thousand: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """60 pages: more than the 50-page cap a host once had; every skill is listed."""
    code, out, err = run(
        ["host", "--server", f"d={SERVE} --page-size 50 {three_thousand}", "list", "--json"], capfd
    )
    assert code == 0, err
    listing = json.loads(out)
    assert len(listing["skills"]) == 3_000
    assert listing["complete"] is True
    assert listing["incomplete"] == []
    assert "INCOMPLETE" not in err


def test_a_listing_cut_by_the_entry_cap_is_said_plainly_WG_05_LIST_05(
    three_thousand: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    server = f"d={SERVE} --page-size 50 {three_thousand}"
    code, out, err = run(["host", "--server", server, "--max-entries", "1000", "list"], capfd)
    assert code == 0, err  # what was read is usable (LIST-05)
    assert "warning: the listing of 'd' is INCOMPLETE: stopped after 1000 entries" in err
    assert "(the cap, 1000 entries)" in err
    assert "raise the cap with --max-entries N" in err
    assert out.count("skill://") == 1_000

    code, out, err = run(
        ["host", "--server", server, "--max-entries", "1000", "list", "--json"], capfd
    )
    listing = json.loads(out)
    assert listing["complete"] is False
    [cut] = listing["incomplete"]
    assert (cut["origin"], cut["reason"]) == ("d", "entry-cap")

    # A skill past the cut cannot be named by its bare name, and the failure says why.
    code, out, err = run(
        ["host", "--server", server, "--max-entries", "1000", "--yes", "load", "s2999"], capfd
    )
    assert code == 1
    assert "no skill 's2999' among the skills listed, but the listing of 'd' was incomplete" in err
    # Raised, the same skill loads.
    code, out, err = run(
        ["host", "--server", server, "--max-entries", "5000", "--yes", "load", "s2999"], capfd
    )
    assert code == 0, err
    assert "skill 2999" in out


def test_a_listing_cut_by_the_byte_budget_names_its_option(
    three_thousand: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    server = f"d={SERVE} {three_thousand}"
    code, _, err = run(["host", "--server", server, "--max-listing-bytes", "100000", "list"], capfd)
    assert code == 0, err
    assert "INCOMPLETE" in err
    assert "raise the cap with --max-listing-bytes N" in err


def test_the_default_page_size_serves_10000_skills_in_50_pages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A host that caps a listing at 50 pages (as this library's once did) reads 10,000 whole;
    ``serve`` uses the library's defaults (the command line spells them out for its start-up)."""
    assert HostPolicy().max_entries <= DEFAULT_PAGE_SIZE * 50
    args = build_parser().parse_args(["serve", "."])
    assert (args.page_size, args.ttl_ms) == (DEFAULT_PAGE_SIZE, DEFAULT_TTL_MS)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    assert f"(default {DEFAULT_PAGE_SIZE})" in " ".join(capsys.readouterr().out.split())


def test_serve_warns_when_a_default_host_reads_only_part_of_its_catalog(tmp_path: Path) -> None:
    root = catalog(tmp_path / "big", 10_001)
    done = subprocess.run(
        [sys.executable, "-m", "skills_core", "serve", str(root)],
        input=b"",
        capture_output=True,
        timeout=300,
        check=True,
    )
    err = done.stderr.decode()
    assert (
        "warning: the listing holds 10,001 entries, over the 10,000 of HostPolicy.max_entries"
        in err
    )
    assert "--max-entries" in err
    small = catalog(tmp_path / "small", 3)
    done = subprocess.run(
        [sys.executable, "-m", "skills_core", "serve", str(small)],
        input=b"",
        capture_output=True,
        timeout=300,
        check=True,
    )
    assert b"warning" not in done.stderr


def test_listing_overflow_counts_as_the_host_does() -> None:
    entry = {
        "uri": "skill://a/SKILL.md",
        "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 1}],
    }
    assert listing_overflow([entry] * 3, HostPolicy(max_entries=3)) is None
    assert listing_overflow([entry] * 4, HostPolicy(max_entries=3)) == (
        "4 entries, over the 3 of HostPolicy.max_entries"
    )
    said = listing_overflow([entry] * 3, HostPolicy(max_listed_resources=2))
    assert said == "3 manifest rows, over the 2 of HostPolicy.max_listed_resources"
    said = listing_overflow([entry], HostPolicy(max_listing_bytes=10))
    assert said is not None
    assert said.endswith("listing bytes, over the 10 of HostPolicy.max_listing_bytes")


def test_serve_past_the_entry_cap_decodes_no_entry_to_say_so() -> None:
    """Past the entry cap (the first budget a host counts), ``serve`` says so from the count
    alone: a catalog of 100,000 skills is not decoded whole while its first pages are served
    (an entry here is not JSON: decoding it would fail)."""
    from types import SimpleNamespace

    from skills_core.adapters._startup import report_catalog

    cap = HostPolicy().max_entries
    skills = [SimpleNamespace(listed=True, encoded_entry=b"not json")] * (cap + 1)
    said: list[str] = []
    report_catalog(
        SimpleNamespace(skills=skills, omitted=()),  # type: ignore[arg-type]
        lambda _kind, message: said.append(message),
    )
    assert len(said) == 1
    assert f"{cap + 1:,} entries, over the {cap:,} of HostPolicy.max_entries" in said[0]
    with pytest.raises(json.JSONDecodeError):  # under the cap, entries are decoded and counted
        report_catalog(
            SimpleNamespace(skills=skills[:cap], omitted=()),  # type: ignore[arg-type]
            lambda _kind, message: said.append(message),
        )
