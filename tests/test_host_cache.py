"""The verified cache: CACHE-01..CACHE-07, ORG-04, VER-13, WG-07, WG-09 (paths, stores, disk)."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from host_helpers import Harness, one, skill_md
from hypothesis import given
from hypothesis import strategies as st

from skills_core import SkillResource
from skills_core import spec_examples as ex
from skills_core.digest import compute_digest
from skills_core.host import (
    ApprovalStore,
    DeliverToModel,
    ExecDecision,
    Host,
    MemoryCacheStore,
    VerifiedCache,
    cache_relpath,
    parse_cache_relpath,
)
from skills_core.host import cache_store as cache_store_module
from skills_core.host.cache import MAX_CACHE_RELPATH, origin_component, uri_key
from skills_core.host.cache_store import CacheLocationError, DiskCacheStore

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
INVOICE = "skill://pdf-processing/templates/invoice.md"
D_INVOICE = ex.EXPECTED["templates/invoice.md"][1]
RESERVED = (
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)

labels = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=16).filter(
    lambda s: len(s.encode()) <= 64
)


# --- paths -----------------------------------------------------------------------------------


# Requirement rows: ORG-04
def test_cache_path_layout_ORG_04() -> None:
    path = cache_relpath(L, INVOICE, D_INVOICE)
    version, origin, key, name = path.split("/")
    assert version == "v1"
    assert origin == origin_component(L)
    assert key == uri_key(INVOICE)
    assert name == D_INVOICE.removeprefix("sha256:")
    location = parse_cache_relpath(path)
    assert location.origin == L
    assert location.digest == D_INVOICE
    assert location.is_for(INVOICE)
    assert not location.is_for(URI)


@pytest.mark.parametrize(
    ("a", "b"),
    [("A", "a"), ("a/b", "a_b"), ("..", "."), ("café", "cafe\u0301"), ("CON", "con"), ("x", "x ")],
)
# Requirement rows: ORG-04
def test_distinct_labels_give_distinct_paths_on_any_filesystem_ORG_04(a: str, b: str) -> None:
    pa = cache_relpath(a, URI, D_INVOICE)
    pb = cache_relpath(b, URI, D_INVOICE)
    assert pa.lower() != pb.lower()  # distinct even on a case-insensitive filesystem
    assert parse_cache_relpath(pa).origin == a
    assert parse_cache_relpath(pb).origin == b


@given(a=labels, b=labels, uri=st.text(min_size=1, max_size=200))
# Requirement rows: ORG-04
def test_paths_are_injective_safe_and_invertible_ORG_04(a: str, b: str, uri: str) -> None:
    pa = cache_relpath(a, uri, D_INVOICE)
    assert parse_cache_relpath(pa).origin == a
    if a != b:
        assert pa.casefold() != cache_relpath(b, uri, D_INVOICE).casefold()
    assert pa == pa.lower()
    assert pa.isascii()
    assert len(pa) <= MAX_CACHE_RELPATH
    for part in pa.split("/"):
        assert part.isalnum()
        assert part not in RESERVED


def test_same_uri_different_digest_and_uri_are_distinct() -> None:
    assert cache_relpath(L, URI, D_INVOICE) != cache_relpath(L, URI, "sha256:" + "0" * 64)
    assert cache_relpath(L, URI, D_INVOICE) != cache_relpath(L, INVOICE, D_INVOICE)
    with pytest.raises(ValueError, match="origin"):
        cache_relpath("", URI, D_INVOICE)


@pytest.mark.parametrize(
    "path",
    [
        "v2/oabc/" + "0" * 64 + "/" + "0" * 64,
        "v1/abc/" + "0" * 64 + "/" + "0" * 64,
        "v1/o/" + "0" * 64 + "/" + "0" * 64,
        "v1/oABC/" + "0" * 64 + "/" + "0" * 64,
        "v1/oa/" + "0" * 64 + "/" + "0" * 64,  # not a valid base32 length
        "v1/oaaa/" + "0" * 64 + "/" + "0" * 64,  # decodes with non-zero padding bits
        "v1/o74/" + "0" * 64 + "/" + "0" * 64,  # not UTF-8
        "v1/omy/" + "x" * 64 + "/" + "0" * 64,
        "v1/omy/" + "0" * 64,
        "v1/omy/" + "0" * 64 + "/.tmp-123",
    ],
)
def test_non_cache_paths_are_refused(path: str) -> None:
    with pytest.raises(ValueError, match="cache path"):
        parse_cache_relpath(path)


# --- the in-memory store and re-verification ------------------------------------------------


def invoice_resource() -> SkillResource:
    return SkillResource(uri=INVOICE, digest=D_INVOICE, size=29)


# Requirement rows: CACHE-02, CACHE-03
def test_every_access_re_verifies_against_the_current_entry_CACHE_02_CACHE_03() -> None:
    store = MemoryCacheStore()
    cache = VerifiedCache(store)
    resource = invoice_resource()
    assert cache.get(L, resource).data is None
    cache.put(L, resource, ex.INVOICE)
    assert cache.get(L, resource).data == ex.INVOICE
    assert cache.get("other", resource).data is None  # never keyed on the URI alone (ORG-03)
    # Tampering: a store keeps what it is given (only VerifiedCache checks), so other bytes put
    # under the same key are what a cache file edited on disk looks like.
    store.put(L, INVOICE, D_INVOICE, b"# Invoice\n\nPayee: mallory\n\n\n\n")
    lookup = cache.get(L, resource)
    assert lookup.data is None
    assert lookup.error is not None
    assert lookup.error.kind == "digest"
    assert len(store) == 0  # the bad copy is discarded
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE * 1000)
    assert cache.get(L, resource).error.kind == "size"  # type: ignore[union-attr]


def test_lookup_reports_a_stale_copy_and_leaves_dropping_it_to_the_caller_CACHE_02() -> None:
    """``lookup`` is the read a load session makes (it may not write the cache): a copy that no
    longer verifies is reported and left; ``discard`` drops it, as ``get`` does by itself."""
    store = MemoryCacheStore()
    cache = VerifiedCache(store)
    resource = invoice_resource()
    cache.put(L, resource, ex.INVOICE)
    assert cache.lookup(L, resource).data == ex.INVOICE
    store.put(L, INVOICE, D_INVOICE, b"# Invoice\n\nPayee: mallory\n\n\n\n")
    stale = cache.lookup(L, resource)
    assert stale.data is None
    assert stale.error is not None
    assert stale.error.kind == "digest"
    assert len(store) == 1  # reported, not dropped
    cache.discard(L, resource)
    assert len(store) == 0
    cache.discard(L, resource)  # nothing left to drop
    disabled = VerifiedCache(None)
    assert disabled.lookup(L, resource).data is None
    disabled.discard(L, resource)


def test_memory_store_bounds_and_housekeeping() -> None:
    store = MemoryCacheStore(max_bytes=10)
    store.put("o", "u1", "d", b"12345")
    store.put("o", "u2", "d", b"12345")
    store.put("o", "u2", "d", b"12345")
    assert store.size == 10
    store.put("o", "u3", "d", b"123")
    assert store.cached_keys() == (("o", "u2", "d"), ("o", "u3", "d"))
    store.put("o", "big", "d", b"x" * 11)
    assert store.get("o", "big", "d", max_size=11) is None
    assert store.get("o", "u2", "d", max_size=2) == b"123"  # never more than max_size + 1
    store.put("o", "u2", "d", b"z")
    store.put("p", "u9", "d", b"z")
    store.discard("o", "u3", "d")
    store.discard("o", "missing", "d")
    store.forget_origin("o")
    assert store.cached_keys() == (("p", "u9", "d"),)
    assert store.size == 1
    disabled = VerifiedCache(None)
    disabled.put("o", invoice_resource(), ex.INVOICE)
    disabled.forget("o")
    assert disabled.get("o", invoice_resource()).data is None


# Requirement rows: CACHE-01
def test_cache_is_filled_on_demand_only_CACHE_01() -> None:
    store = MemoryCacheStore()
    h = Harness(Host(cache=store))
    h.add_server(L).add("pdf-processing", ex.FILES)
    h.list_all(L)
    assert len(store) == 0
    h.load(L, URI)
    h.read(L, URI, "templates/invoice.md")
    assert {k[1] for k in store.cached_keys()} == {URI, INVOICE}
    assert all(k[0] == L for k in store.cached_keys())


# --- the disk store --------------------------------------------------------------------------


# Requirement rows: CACHE-02
def test_disk_store_round_trip_modes_and_atomicity_CACHE_02(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    store = DiskCacheStore(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)  # again: replaced atomically, never in place
    path = root / cache_relpath(L, INVOICE, D_INVOICE)
    assert path.read_bytes() == ex.INVOICE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary files left
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) == ex.INVOICE
    assert store.get(L, INVOICE, D_INVOICE, max_size=3) == ex.INVOICE[:4]
    assert store.get("other", INVOICE, D_INVOICE, max_size=29) is None
    assert store.get(L, URI, D_INVOICE, max_size=29) is None
    assert store.last_error is None


# Requirement rows: CACHE-07
def test_same_uri_from_two_servers_lands_apart_and_forget_removes_one_CACHE_07(
    tmp_path: Path,
) -> None:
    store = DiskCacheStore(tmp_path)
    store.put("a", INVOICE, D_INVOICE, ex.INVOICE)
    store.put("b", INVOICE, D_INVOICE, ex.INVOICE)
    assert sorted(loc.origin for loc in store.locations()) == ["a", "b"]
    (tmp_path / "v1" / "stray.txt").write_text("x")
    store.forget_origin("a")
    assert [loc.origin for loc in store.locations()] == ["b"]
    store.forget_origin("never-cached")
    store.discard("b", INVOICE, D_INVOICE)
    store.discard("b", INVOICE, D_INVOICE)
    store.discard("zzz", INVOICE, D_INVOICE)
    assert list(store.locations()) == []


# Requirement rows: CACHE-07
def test_host_forget_removes_cached_content_CACHE_07(tmp_path: Path) -> None:
    store = DiskCacheStore(tmp_path)
    h = Harness(Host(cache=store))
    for label in (L, "mirror"):
        h.add_server(label).add("pdf-processing", ex.FILES)
        h.list_all(label)
        h.load(label, URI)
    assert sorted({loc.origin for loc in store.locations()}) == [L, "mirror"]
    h.host.forget(L)
    assert {loc.origin for loc in store.locations()} == {"mirror"}


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_disk_store_never_follows_symlinks(tmp_path: Path) -> None:
    store = DiskCacheStore(tmp_path / "cache")
    secret = tmp_path / "secret"
    secret.write_bytes(ex.INVOICE)
    path = tmp_path / "cache" / cache_relpath(L, INVOICE, D_INVOICE)
    path.parent.mkdir(parents=True)
    path.symlink_to(secret)
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) is None
    # A symlinked directory on the way is refused too.
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / D_INVOICE.removeprefix("sha256:")).write_bytes(ex.INVOICE)
    key_dir = tmp_path / "cache" / cache_relpath("b", INVOICE, D_INVOICE).rsplit("/", 1)[0]
    key_dir.parent.mkdir(parents=True)
    key_dir.symlink_to(other, target_is_directory=True)
    assert store.get("b", INVOICE, D_INVOICE, max_size=29) is None
    store.put("b", INVOICE, D_INVOICE, ex.INVOICE)
    assert store.last_error is not None
    store.discard("b", INVOICE, D_INVOICE)
    assert (other / D_INVOICE.removeprefix("sha256:")).exists()
    # A directory where the file should be is no file.
    fake = tmp_path / "cache" / cache_relpath("c", INVOICE, D_INVOICE)
    fake.mkdir(parents=True)
    assert store.get("c", INVOICE, D_INVOICE, max_size=29) is None
    # An origin directory replaced by a symlink is removed as a link, not followed.
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    link = tmp_path / "cache" / "v1" / origin_component("d")
    link.symlink_to(victim, target_is_directory=True)
    store.forget_origin("d")
    assert (victim / "keep").exists()
    assert not link.exists()


def test_disk_store_portable_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_store_module, "_HAVE_DIR_FD", False)
    store = DiskCacheStore(tmp_path)
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) is None
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) == ex.INVOICE
    store.discard(L, INVOICE, D_INVOICE)
    store.discard(L, INVOICE, D_INVOICE)
    store.discard("zzz", INVOICE, D_INVOICE)
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) is None
    if sys.platform != "win32":
        secret = tmp_path / "secret"
        secret.write_bytes(ex.INVOICE)
        path = tmp_path / cache_relpath(L, INVOICE, D_INVOICE)
        path.symlink_to(secret)
        assert store.get(L, INVOICE, D_INVOICE, max_size=29) is None
        key_dir = tmp_path / cache_relpath("b", INVOICE, D_INVOICE).rsplit("/", 1)[0]
        key_dir.parent.mkdir(parents=True)
        key_dir.symlink_to(tmp_path, target_is_directory=True)
        assert store.get("b", INVOICE, D_INVOICE, max_size=29) is None
        store.put("b", INVOICE, D_INVOICE, ex.INVOICE)
        assert store.last_error is not None


def test_write_and_read_errors_never_escape(tmp_path: Path) -> None:
    store = DiskCacheStore(tmp_path)
    blocker = tmp_path / "v1"
    blocker.write_text("not a directory")
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)
    assert isinstance(store.last_error, OSError)
    assert store.get(L, INVOICE, D_INVOICE, max_size=29) is None
    store.discard(L, INVOICE, D_INVOICE)
    assert list(store.locations()) == []


def test_rename_failure_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DiskCacheStore(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", broken)
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)
    assert str(store.last_error) == "rename failed"
    key_dir = tmp_path / cache_relpath(L, INVOICE, D_INVOICE).rsplit("/", 1)[0]
    assert list(key_dir.iterdir()) == []
    monkeypatch.setattr(cache_store_module, "_HAVE_DIR_FD", False)
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)
    assert list(key_dir.iterdir()) == []


def test_forget_error_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DiskCacheStore(tmp_path)
    store.put(L, INVOICE, D_INVOICE, ex.INVOICE)

    def broken(path: object) -> None:
        raise OSError("busy")

    monkeypatch.setattr(shutil, "rmtree", broken)
    store.forget_origin(L)
    assert str(store.last_error) == "busy"


# --- location rules --------------------------------------------------------------------------


# Requirement rows: CACHE-04
def test_cache_outside_every_discovery_path_CACHE_04(tmp_path: Path) -> None:
    skills = tmp_path / "home" / ".claude" / "skills"
    skills.mkdir(parents=True)
    refused = [
        skills / "mcp-cache",  # inside
        skills,  # equal
        tmp_path / "home",  # containing
        skills / ".." / "skills" / "cache",  # via ..
        tmp_path / "home" / ".CLAUDE" / "Skills" / "cache",  # a case variant
    ]
    for directory in refused:
        with pytest.raises(CacheLocationError, match="CACHE-04"):
            DiskCacheStore(directory, discovery_paths=[skills])
    if sys.platform != "win32":
        alias = tmp_path / "alias"
        alias.symlink_to(skills, target_is_directory=True)
        with pytest.raises(CacheLocationError):
            DiskCacheStore(alias / "cache", discovery_paths=[skills])
        with pytest.raises(CacheLocationError):
            DiskCacheStore(skills / "c2", discovery_paths=[alias])
    ok = DiskCacheStore(tmp_path / "var" / "cache", discovery_paths=[skills, str(tmp_path / "x")])
    assert ok.root == os.path.realpath(tmp_path / "var" / "cache")


def test_cache_directory_must_be_a_private_directory(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(CacheLocationError, match="cannot create"):
        DiskCacheStore(file)
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    DiskCacheStore(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_cache_directory_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    with pytest.raises(CacheLocationError, match="another user"):
        DiskCacheStore(tmp_path)


# --- cached content stays MCP content --------------------------------------------------------


# Requirement rows: CACHE-05, CACHE-06
def test_content_from_the_cache_is_still_mcp_content_after_restart_CACHE_05_CACHE_06(
    tmp_path: Path,
) -> None:
    md = skill_md("tools", extra="allowed-tools: Bash\n")
    h = Harness(Host(cache=DiskCacheStore(tmp_path)))
    uri = h.add_server(L).add("tools", {"SKILL.md": md})
    h.list_all(L)
    h.load(L, uri)
    saved = h.host.approvals.dumps()
    # A new host process: same cache directory, saved approvals.
    h2 = Harness(Host(cache=DiskCacheStore(tmp_path), approvals=ApprovalStore.loads(saved)))
    h2.add_server(L).add("tools", {"SKILL.md": md})
    h2.list_all(L)
    effects = h2.load(L, uri, approve=False)
    delivered = one(effects, DeliverToModel)
    assert delivered.from_cache
    assert delivered.origin == L
    assert delivered.trust == "untrusted"
    assert "not a local skill" in delivered.model_text
    assert h2.methods() == ["skills/list"]  # nothing fetched: served from the verified cache
    assert h2.host.permissions(L, uri).allowed_tools is None
    assert h2.host.exec_gate().decision is ExecDecision.REQUIRE_APPROVAL
    assert not any(c.is_local for c in h2.host.resolve("tools").candidates)


def test_digest_helper_consistency() -> None:
    assert compute_digest(ex.INVOICE) == D_INVOICE


def test_non_canonical_base32_is_refused() -> None:
    with pytest.raises(ValueError, match="origin component"):
        parse_cache_relpath("v1/oab/" + "0" * 64 + "/" + "0" * 64)


def test_ownership_check_is_skipped_without_getuid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "getuid", raising=False)
    assert DiskCacheStore(tmp_path).root == os.path.realpath(tmp_path)
