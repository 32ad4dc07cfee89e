"""StoreSource and source URLs, pure: states swapped whole and never older, reads verified.

The fetcher here is a dictionary of bytes by digest, the least a store can be; the S3 and git
adapters' own fetchers are tested against SeaweedFS and real repositories elsewhere.
"""

from __future__ import annotations

import pytest
from server_helpers import skill_md

from skills_core.digest import compute_digest
from skills_core.jsonvalue import JSONValue
from skills_core.server.handler import SkillsServer
from skills_core.server.model import OmittedSkill, PublishedSkill
from skills_core.server.source import MemorySource
from skills_core.sources._background import CachingFetcher
from skills_core.sources.published import document_from_catalog
from skills_core.sources.store import BlobError, CatalogChecker, StoreSource, StoreState
from skills_core.sources.urls import S3URL, GitURL, is_source_url, parse_source_url

FILES = {
    "alpha/SKILL.md": skill_md("alpha", "First"),
    "alpha/notes/guide.md": b"guide\n",
    "beta/SKILL.md": skill_md("other", "Left out"),
}


def state(files: dict[str, bytes], generation: int) -> StoreState:
    document = document_from_catalog(
        MemorySource(files).scan(), generation=generation, scheme="skill"
    )
    return CatalogChecker().state(document)


class Blobs:
    """Bytes by digest; ``wrong`` serves other bytes for one digest."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.data = {compute_digest(data): data for data in files.values()}
        self.wrong: dict[str, bytes] = {}
        self.fetched: list[str] = []

    def fetch(self, digest: str, size: int) -> bytes:
        self.fetched.append(digest)
        if digest in self.wrong:
            return self.wrong[digest]
        if digest not in self.data:
            raise BlobError(f"blobs/{digest}", "there is no such object")
        return self.data[digest]

    def cached(self, digest: str) -> bool:
        return False

    def describe(self, digest: str) -> str:
        return f"blobs/{digest}"


def alpha(source: StoreSource) -> PublishedSkill:
    skill = source.scan().get("skill://alpha/SKILL.md")
    assert isinstance(skill, PublishedSkill)
    return skill


def test_states_are_swapped_whole_on_poll_and_never_an_older_one() -> None:
    logged: list[str] = []
    closed: list[bool] = []
    source = StoreSource(
        state(FILES, 2), Blobs(FILES), log=logged.append, close=lambda: closed.append(True)
    )
    assert source.scheme == "skill"
    assert source.poll(0) is None
    source.offer(state({**FILES, "gamma/SKILL.md": skill_md("gamma", "G")}, 3))
    catalog = source.poll(0)
    assert catalog is not None
    assert [s.uri for s in catalog.skills][-1] == "skill://gamma/SKILL.md"
    assert source.poll(0) is None  # offered once, swapped once
    source.offer(state(FILES, 1))
    assert source.poll(0) is None
    assert source.state.generation == 3
    assert logged == [
        "refused generation 1: it is not newer than generation 3, which is served (a replica "
        "never goes back to an older catalog)"
    ]
    source.close()
    source.close()
    assert closed == [True]


def test_an_empty_state_serves_the_default_scheme() -> None:
    source = StoreSource(state({}, 1), Blobs({}))
    assert source.scheme == "skill"
    assert source.scan().skills == ()


def test_recheck_answers_from_the_state_served() -> None:
    source = StoreSource(state(FILES, 1), Blobs(FILES))
    assert isinstance(source.recheck("skill://alpha/SKILL.md"), PublishedSkill)
    left_out = source.recheck("skill://beta/SKILL.md")
    assert isinstance(left_out, OmittedSkill)
    assert source.recheck("skill://nothing/SKILL.md") is None
    server = SkillsServer(source, cursor_key=b"k" * 32)
    meta: dict[str, JSONValue] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    got = server.answer("skills/get", {"uri": "skill://alpha/SKILL.md", "_meta": meta})
    assert isinstance(got, dict)


def test_reads_are_verified_and_what_does_not_match_is_refused_and_logged() -> None:
    logged: list[str] = []
    blobs = Blobs(FILES)
    source = StoreSource(state(FILES, 1), blobs, log=logged.append)
    skill = alpha(source)
    assert source.read(skill, "notes/guide.md") == b"guide\n"
    assert source.read(skill, "notes") is None  # a folder
    assert source.read(skill, "missing.md") is None
    assert source.read(skill, "bad\x00name") is None  # no URI can carry it
    assert source.read_blocks(skill, "notes/guide.md")
    assert not source.read_blocks(skill, "missing.md")
    digest = compute_digest(b"guide\n")
    blobs.wrong[digest] = b"other!\n"
    with pytest.raises(BlobError, match="holds 7 bytes, not the 6 published"):
        source.read(skill, "notes/guide.md")
    blobs.wrong[digest] = b"GUIDE\n"
    with pytest.raises(BlobError, match="does not match its digest"):
        source.read(skill, "notes/guide.md")
    del blobs.data[compute_digest(FILES["alpha/SKILL.md"])]
    with pytest.raises(BlobError, match="no such object"):
        source.read(skill, "SKILL.md")
    assert logged == [
        f"refused blobs/{digest}: it holds 7 bytes, not the 6 published (replaced or damaged "
        "in the store?)",
        f"refused blobs/{digest}: it does not match its digest (replaced or damaged in the store?)",
        f"cannot read blobs/{compute_digest(FILES['alpha/SKILL.md'])}: there is no such object",
    ]


def test_directory_reads_come_from_the_state_and_its_empty_folders() -> None:
    document = document_from_catalog(
        MemorySource(FILES).scan(),
        generation=1,
        scheme="skill",
        dirs={"skill://alpha/SKILL.md": ["empty", "notes/deeper"]},
    )
    source = StoreSource(CatalogChecker().state(document), Blobs(FILES))
    skill = alpha(source)
    assert source.list_directory(skill, "") == [
        ("SKILL.md", False),
        ("empty", True),
        ("notes", True),
    ]
    assert source.list_directory(skill, "notes") == [("deeper", True), ("guide.md", False)]
    assert source.list_directory(skill, "empty") == []
    assert source.list_directory(skill, "SKILL.md") is None


def test_the_caching_fetcher_keeps_what_matches_within_its_bound() -> None:
    blobs = Blobs(FILES)
    fetcher = CachingFetcher(blobs.fetch, blobs.describe, limit=10)
    digest = compute_digest(b"guide\n")
    assert fetcher.fetch(digest, 6) == b"guide\n"
    assert fetcher.cached(digest)
    assert fetcher.fetch(digest, 6) == b"guide\n"
    assert blobs.fetched == [digest]
    other = compute_digest(FILES["alpha/SKILL.md"])
    fetcher.fetch(other, len(FILES["alpha/SKILL.md"]))  # over the bound: the older goes
    assert not fetcher.cached(digest)
    blobs.wrong[digest] = b"GUIDE\n"
    assert fetcher.fetch(digest, 6) == b"GUIDE\n"  # returned (the source refuses it)...
    assert not fetcher.cached(digest)  # ...never kept
    assert fetcher.describe(digest) == f"blobs/{digest}"
    fetcher.forget()
    assert not fetcher.cached(other)


# --- source URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("s3://skills", S3URL("skills", "")),
        ("s3://skills/", S3URL("skills", "")),
        ("s3://skills/team/prod/", S3URL("skills", "team/prod")),
        ("git:/srv/skills.git", GitURL("/srv/skills.git", "HEAD")),
        ("git:/srv/skills.git@main", GitURL("/srv/skills.git", "main")),
        ("git:/srv/a@b.git@v3", GitURL("/srv/a@b.git", "v3")),
        ("./skills", None),
    ],
)
def test_source_urls_parse(text: str, parsed: object) -> None:
    assert parse_source_url(text) == parsed
    assert is_source_url(text) == (parsed is not None)
    if isinstance(parsed, S3URL):
        assert parsed.key("catalog.json") == (
            f"{parsed.prefix}/catalog.json" if parsed.prefix else "catalog.json"
        )
        assert parse_source_url(str(parsed)) == parsed
    if isinstance(parsed, GitURL):
        assert parse_source_url(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s3://", "the bucket name is missing"),
        ("s3://a/x", "the bucket name is missing"),  # too short a name
        ("s3://skills/a//b", "an empty, '.' or '..' part"),
        ("s3://skills/a/../b", "an empty, '.' or '..' part"),
        ("s3://skills/a?b", "a control character"),
        ("s3://skills/a\x01", "a control character"),
        ("git:", "is not git:PATH"),
        ("git:/srv/x@", "is not git:PATH"),
        ("git:/srv/x@-c", "is not a ref"),
        ("git:/srv/x@a b", "is not a ref"),
    ],
)
def test_malformed_source_urls_say_how_to_write_them(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_source_url(text)
