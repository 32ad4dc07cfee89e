"""Real peer: our host loads and reads skills from a FastMCP 4.1.6 stdio server.

``tests/peers/fastmcp_server.py`` serves a temporary folder through FastMCP's
``SkillsDirectoryProvider(..., experimental_skills=True)`` plus ``SkillsExtension``. Our host
connects with the asyncio adapter and ``host.driver``: the handshake must land in the modern era
(FastMCP serves skills only there), every entry FastMCP lists must validate and equal the spec's
(digests and sizes computed by a different implementation), and every byte delivered to the model
must be verified against the approved manifest. FastMCP declares the extension without
``directoryRead``, so directory listings must come from the held manifest with no request sent
(DIR-12, CAP-06); FastMCP answers ``resources/directory/read`` with -32601 anyway.

FastMCP takes 1-2 s to start, so one server process (on one event loop, kept in an
``asyncio.Runner``) is shared by the module's read-only tests; each test builds a fresh host and
performs its own handshake on that connection, which is stateless in the modern era. The test that
changes files under the server uses its own folder and process.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest
from interop_helpers import (
    EXTRA_FILES,
    REFUNDS_GUIDE,
    REFUNDS_SKILL_MD,
    Recorder,
    child_env,
    fastmcp_argv,
    new_host,
    none_of,
    only,
    pump,
    sha256_digest,
    write_files,
    write_spec_skill,
)

from skills_core import spec_examples as ex
from skills_core.adapters.asyncio_stdio import open_stdio_client
from skills_core.errors import JsonRpcError, VerificationKind
from skills_core.host.driver import handshake
from skills_core.host.effects import (
    ApprovalGranted,
    ApprovalRevoked,
    Connected,
    DeliverToModel,
    DeliveryKind,
    DirectoryListing,
    Effect,
    EntryRejected,
    FailureSource,
    ListingComplete,
    RegistryUpdated,
    RequestApproval,
    SkillChanged,
    SkillLoaded,
    VerificationFailed,
)
from skills_core.host.router import Host

_T = TypeVar("_T")

LABEL: Final = "fastmcp"
#: Generous: FastMCP needs 1-2 s to start and its first skills/list takes ~0.4 s more.
TIMEOUT: Final = 60.0
SKILL: Final = ex.SKILL_MD_URI
REFUNDS: Final = "skill://acme/billing/refunds/SKILL.md"
DATA: Final = "skill://data-files/SKILL.md"
NOTES: Final = "skill://meeting-notes/SKILL.md"

#: Files FastMCP serves as base64 blobs (JSON, no extension, non-UTF-8 text) and as text.
DATA_FILES: Final = {
    "data-files/SKILL.md": (
        b"---\nname: data-files\ndescription: Files FastMCP serves as blobs\n---\n\n# Data\n"
    ),
    "data-files/rates.json": b'{"eur": 1.0, "usd": 1.08}\n',
    "data-files/raw": bytes(range(256)),
    "data-files/latin1.txt": "caf\u00e9 cr\u00e8me\n".encode("latin-1"),
    "data-files/scripts/run.py": b"print('hello')\n",
}


@dataclass
class Peer:
    """A FastMCP server process and the event loop its connection lives on."""

    runner: asyncio.Runner
    connection: Recorder
    root: Path

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return self.runner.run(coro)


@contextlib.contextmanager
def fastmcp_peer(root: Path) -> Iterator[Peer]:
    """Start the FastMCP peer on ``root``; always shut it down (close stdin, TERM, KILL)."""
    runner = asyncio.Runner()
    stack = contextlib.AsyncExitStack()
    try:
        client = runner.run(
            stack.enter_async_context(
                open_stdio_client(fastmcp_argv(root), label=LABEL, env=child_env())
            )
        )
        yield Peer(runner, Recorder(client), root)
    finally:
        try:
            runner.run(stack.aclose())
        finally:
            runner.close()


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    root = tmp_path_factory.mktemp("fastmcp") / "skills"
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    write_files(root, DATA_FILES)
    with fastmcp_peer(root) as started:
        yield started


@dataclass
class Session:
    """A fresh host connected to a peer, with a helper that drives it."""

    peer: Peer
    host: Host = field(default_factory=new_host)

    def pump(self, effects: list[Effect]) -> list[Effect]:
        return self.peer.run(
            pump(self.host, effects, {LABEL: self.peer.connection}, timeout=TIMEOUT)
        )

    def sent_during(self, effects: list[Effect]) -> tuple[list[Effect], list[str]]:
        before = len(self.peer.connection.sent)
        done = self.pump(effects)
        return done, self.peer.connection.sent[before:]

    def connect(self) -> list[Effect]:
        return self.peer.run(handshake(self.host, LABEL, self.peer.connection, timeout=TIMEOUT))

    def load(self, uri: str) -> DeliverToModel:
        """List (once), load and approve ``uri``; return the verified SKILL.md delivery."""
        prompt = only(self.pump(self.host.load(LABEL, uri)), RequestApproval)
        effects = self.pump(self.host.approve(prompt.prompt_id))
        only(effects, ApprovalGranted)
        only(effects, SkillLoaded)
        delivery = only(effects, DeliverToModel)
        assert delivery.verified
        assert delivery.kind is DeliveryKind.SKILL
        return delivery

    def read(self, uri: str, ref: str) -> DeliverToModel:
        effects = self.pump(self.host.read(LABEL, uri, ref))
        none_of(effects, VerificationFailed)
        delivery = only(effects, DeliverToModel)
        assert delivery.verified
        assert delivery.origin == LABEL
        return delivery


@pytest.fixture
def session(peer: Peer) -> Session:
    connected = Session(peer)
    connected.connect()
    connected.pump(connected.host.list_skills(LABEL))
    return connected


def test_handshake_lands_in_modern_mode(peer: Peer) -> None:
    """CAP-01, CAP-02, CAP-03: discover succeeds (no initialize); no directoryRead declared."""
    fresh = Session(peer)
    before = len(peer.connection.sent)
    effects = fresh.connect()
    assert peer.connection.sent[before:] == ["server/discover"]  # no fallback to initialize
    features = only(effects, Connected).features
    assert features.resources
    assert features.skills
    assert not features.directory_read
    assert fresh.host.features(LABEL) == features


def test_listing_validates_with_the_spec_digests_and_sizes(peer: Peer) -> None:
    """LIST-01/07/13, ENTRY validation, VER-05, VER-12: FastMCP's entries equal the spec's."""
    fresh = Session(peer)
    fresh.connect()
    effects, sent = fresh.sent_during(fresh.host.list_skills(LABEL))
    assert sent == ["skills/list"]  # nothing fetched on listing (VER-12)
    none_of(effects, EntryRejected)
    assert only(effects, ListingComplete).entries == 4
    assert set(only(effects, RegistryUpdated).added) == {SKILL, REFUNDS, DATA, NOTES}
    entry = fresh.host.registry.get(LABEL, SKILL)
    assert entry is not None
    assert entry.to_json() == ex.entry_json()
    refunds = fresh.host.registry.get(LABEL, REFUNDS)
    assert refunds is not None
    assert refunds.name == "refunds"
    sizes = {r.uri: (r.size, r.digest) for r in refunds.resources if not isinstance(r, str)}
    assert sizes == {
        REFUNDS: (len(REFUNDS_SKILL_MD), sha256_digest(REFUNDS_SKILL_MD)),
        "skill://acme/billing/refunds/references/GUIDE.md": (
            len(REFUNDS_GUIDE),
            sha256_digest(REFUNDS_GUIDE),
        ),
    }


def test_load_and_read_verify_every_byte(session: Session) -> None:
    """VER-04, VER-06, VER-10, VER-17, APR-01, LIST-12: load, approve, read both templates."""
    host = session.host
    prompt_effects, sent = session.sent_during(host.load(LABEL, SKILL))
    assert sent == []  # a listed entry is complete: no skills/get, and nothing before approval
    prompt = only(prompt_effects, RequestApproval)
    assert prompt.origin == LABEL
    assert prompt.manifest != "dynamic"
    assert {(r.uri, r.size, r.digest) for r in prompt.manifest} == {
        (f"skill://pdf-processing/{path}", size, digest)
        for path, (size, digest) in ex.EXPECTED.items()
        if path in ex.FILES
    }
    effects, sent = session.sent_during(host.approve(prompt.prompt_id))
    assert sent == ["resources/read"]
    skill_md = only(effects, DeliverToModel)
    assert skill_md.verified
    assert skill_md.content == ex.SKILL_MD
    for ref, data in (
        ("templates/invoice.md", ex.INVOICE),
        ("templates/purchase-order.md", ex.PURCHASE_ORDER),
    ):
        delivery = session.read(SKILL, ref)
        assert delivery.uri == f"skill://pdf-processing/{ref}"
        assert delivery.content == data
        assert delivery.kind is DeliveryKind.SKILL_FILE


def test_list_dir_answers_from_the_manifest_without_a_request(session: Session) -> None:
    """DIR-12, CAP-06: no directoryRead declared, so nothing is sent for a directory listing."""
    session.load(SKILL)
    for ref, names in (
        ("templates", ["invoice.md", "purchase-order.md"]),
        ("", ["SKILL.md", "templates"]),
    ):
        effects, sent = session.sent_during(session.host.list_dir(LABEL, SKILL, ref))
        assert sent == []
        listing = only(effects, DirectoryListing)
        assert listing.from_manifest
        assert sorted(c.name for c in listing.children) == names
        assert listing.verified


def test_fastmcp_has_no_directory_read(peer: Peer) -> None:
    """ERR-05: FastMCP does not implement the method it does not declare (why CAP-06 matters)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    with pytest.raises(JsonRpcError) as caught:
        peer.run(
            peer.connection.request(
                "resources/directory/read",
                {"uri": "skill://pdf-processing/templates", "_meta": meta},
                timeout=TIMEOUT,
            )
        )
    assert caught.value.rpc_code == -32601


def test_nested_skill_loads_and_reads(session: Session) -> None:
    """URI-02, URI-12, URI-17: a nested skill from FastMCP; its reference resolves to its root."""
    skill_md = session.load(REFUNDS)
    assert skill_md.content == REFUNDS_SKILL_MD
    guide = session.read(REFUNDS, "references/GUIDE.md")
    assert guide.uri == "skill://acme/billing/refunds/references/GUIDE.md"
    assert guide.content == REFUNDS_GUIDE


def test_blob_contents_verify(session: Session) -> None:
    """VER-17: FastMCP sends JSON, extension-less and non-UTF-8 files as base64 blobs."""
    session.load(DATA)
    for path in ("rates.json", "raw", "latin1.txt", "scripts/run.py"):
        delivery = session.read(DATA, path)
        assert delivery.content == DATA_FILES[f"data-files/{path}"]
    # The wire really carried a blob for these (so the host's blob path was exercised).
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    result = session.peer.run(
        session.peer.connection.request(
            "resources/read", {"uri": "skill://data-files/raw", "_meta": meta}, timeout=TIMEOUT
        )
    )
    contents = result["contents"]
    assert isinstance(contents, list)
    [item] = contents
    assert isinstance(item, dict)
    blob = item["blob"]
    assert isinstance(blob, str)
    assert base64.b64decode(blob) == bytes(range(256))


def test_changes_under_fastmcp_follow_the_spec_flow(tmp_path: Path) -> None:
    """DIR-12/13/14, HELD-03/04/05, VER-06/09, APR-02, DIR-15/16: the spec's flow, on FastMCP.

    FastMCP with ``experimental_skills=True`` rescans the folder on every request, so a file added
    or rewritten on disk is what it lists and serves next; the host must refuse the unlisted file,
    refresh, revoke, re-prompt, and then verify under the new entry. Then a file is rewritten in
    place: the server serves the new bytes, the host refuses them against the held digest, and
    the refresh brings the entry that verifies them.
    """
    root = tmp_path / "skills"
    folder = write_spec_skill(root)
    with fastmcp_peer(root) as live:
        session = Session(live)
        session.connect()
        session.pump(session.host.list_skills(LABEL))
        session.load(SKILL)
        host = session.host

        (folder / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
        effects, sent = session.sent_during(host.list_dir(LABEL, SKILL, "templates"))
        assert sent == []
        listing = only(effects, DirectoryListing)
        assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]

        effects, sent = session.sent_during(host.read(LABEL, SKILL, "templates/credit-note.md"))
        assert sent == ["skills/get"]  # the refresh; the unlisted file itself is never requested
        failed = only(effects, VerificationFailed)
        assert failed.error.kind is VerificationKind.UNLISTED
        assert failed.source is FailureSource.MANIFEST
        none_of(effects, DeliverToModel)
        changed = only(effects, SkillChanged)
        assert changed.requires_reapproval
        assert not changed.skill_md_changed
        only(effects, ApprovalRevoked)
        prompt = only(effects, RequestApproval)
        assert {r.uri for r in prompt.manifest if not isinstance(r, str)} == {
            f"skill://pdf-processing/{path}" for path in ex.FILES_WITH_CREDIT_NOTE
        }
        session.pump(host.approve(prompt.prompt_id))
        note = session.read(SKILL, "templates/credit-note.md")
        assert note.content == ex.CREDIT_NOTE
        assert sha256_digest(note.content) == ex.EXPECTED["templates/credit-note.md"][1]

        rewritten = b"# Invoice\n\nCustomer:\nAmount:\nDue date:\n"
        (folder / "templates" / "invoice.md").write_bytes(rewritten)
        effects, sent = session.sent_during(host.read(LABEL, SKILL, "templates/invoice.md"))
        assert sent == ["resources/read", "skills/get"]
        failed = only(effects, VerificationFailed)
        assert failed.error.kind in (VerificationKind.SIZE, VerificationKind.DIGEST)
        assert failed.source is FailureSource.SERVER
        none_of(effects, DeliverToModel)
        only(effects, SkillChanged)
        prompt = only(effects, RequestApproval)
        session.pump(host.approve(prompt.prompt_id))
        invoice = session.read(SKILL, "templates/invoice.md")
        assert invoice.content == rewritten
