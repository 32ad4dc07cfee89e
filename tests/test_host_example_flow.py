"""The spec's "Example Message Flow", replayed message by message through the host.

Every request the host emits is compared with the spec's JSON (``_meta`` aside: the spec's examples
omit it "for brevity"; CAP-10), and every response fed back is the spec's JSON, verbatim. JSON-RPC
ids are those of the spec: the caller of a sans-IO host allocates them, here 2, 3, 4, 5, 6 in send
order, which is exactly the spec's numbering (id 5, the read of invoice.md, is described in prose).
"""

from __future__ import annotations

import json
from typing import Any

from host_helpers import kinds, of, one, read_result, strip_meta

from skills_core import spec_examples as ex
from skills_core.host import (
    ApprovalGranted,
    ApprovalReason,
    ApprovalRevoked,
    DeliverToModel,
    DeliveryKind,
    DirectoryListing,
    HeldEntryReplaced,
    Host,
    ListingComplete,
    LoadState,
    RefusalCode,
    Refused,
    RegistryUpdated,
    RequestApproval,
    SendRequest,
    SkillChanged,
    SkillLoaded,
    VerificationFailed,
)
from skills_core.spec import (
    EXTENSION_ID,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)

LABEL = "docs-server"

CAPABILITIES = json.loads(
    """{"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}}"""
)

LIST_REQUEST = json.loads('{"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {}}')
LIST_RESPONSE = json.loads(
    """
{
  "jsonrpc": "2.0",
  "id": 2,
  "result": {
    "resultType": "complete",
    "skills": [
      {
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {
          "name": "pdf-processing",
          "description": "Extract, fill, and assemble PDF documents"
        },
        "resources": [
          {
            "uri": "skill://pdf-processing/SKILL.md",
            "digest": "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
            "size": 151
          },
          {
            "uri": "skill://pdf-processing/templates/invoice.md",
            "digest": "sha256:61f4ea6d2c75fde1b4977219e7e3107d491c3c26aefb6686e84d6281c088d9ee",
            "size": 29
          },
          {
            "uri": "skill://pdf-processing/templates/purchase-order.md",
            "digest": "sha256:f2ff774b1737ff3dec81c47946f9976f18a1a9f69dda0a81f22eabd95173c158",
            "size": 35
          }
        ]
      }
    ],
    "ttlMs": 300000,
    "cacheScope": "public"
  }
}
"""
)
READ_REQUEST = json.loads(
    """{"jsonrpc": "2.0", "id": 3, "method": "resources/read",
        "params": {"uri": "skill://pdf-processing/SKILL.md"}}"""
)
# The spec's JSON, verbatim; the long "text" line is split in two Python literals only.
READ_RESPONSE = json.loads(
    r"""
{
  "jsonrpc": "2.0",
  "id": 3,
  "result": {
    "resultType": "complete",
    "contents": [
      {
        "uri": "skill://pdf-processing/SKILL.md",
        "mimeType": "text/markdown",
        "text": "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents"""
    r"""\n---\n\n# PDF processing\n\nChoose the matching template from `templates/`.\n"
      }
    ],
    "ttlMs": 300000,
    "cacheScope": "public"
  }
}
"""
)
DIR_REQUEST = json.loads(
    """{"jsonrpc": "2.0", "id": 4, "method": "resources/directory/read",
        "params": {"uri": "skill://pdf-processing/templates"}}"""
)
DIR_RESPONSE = json.loads(
    """
{
  "jsonrpc": "2.0",
  "id": 4,
  "result": {
    "resultType": "complete",
    "resources": [
      {
        "uri": "skill://pdf-processing/templates/invoice.md",
        "name": "invoice.md",
        "mimeType": "text/markdown"
      },
      {
        "uri": "skill://pdf-processing/templates/purchase-order.md",
        "name": "purchase-order.md",
        "mimeType": "text/markdown"
      },
      {
        "uri": "skill://pdf-processing/templates/credit-note.md",
        "name": "credit-note.md",
        "mimeType": "text/markdown"
      }
    ]
  }
}
"""
)
GET_REQUEST = json.loads(
    """{"jsonrpc": "2.0", "id": 6, "method": "skills/get",
        "params": {"uri": "skill://pdf-processing/SKILL.md"}}"""
)
GET_RESPONSE = json.loads(
    """
{
  "jsonrpc": "2.0",
  "id": 6,
  "result": {
    "resultType": "complete",
    "skill": {
      "uri": "skill://pdf-processing/SKILL.md",
      "frontmatter": {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents"
      },
      "resources": [
        {
          "uri": "skill://pdf-processing/SKILL.md",
          "digest": "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
          "size": 151
        },
        {
          "uri": "skill://pdf-processing/templates/invoice.md",
          "digest": "sha256:61f4ea6d2c75fde1b4977219e7e3107d491c3c26aefb6686e84d6281c088d9ee",
          "size": 29
        },
        {
          "uri": "skill://pdf-processing/templates/purchase-order.md",
          "digest": "sha256:f2ff774b1737ff3dec81c47946f9976f18a1a9f69dda0a81f22eabd95173c158",
          "size": 35
        },
        {
          "uri": "skill://pdf-processing/templates/credit-note.md",
          "digest": "sha256:766bffa8d4908ce897e1727ca22e4bf0fa796620b35218ce2132a124545626f1",
          "size": 39
        }
      ]
    },
    "ttlMs": 300000,
    "cacheScope": "public"
  }
}
"""
)

INVOICE_URI = "skill://pdf-processing/templates/invoice.md"
CREDIT_URI = "skill://pdf-processing/templates/credit-note.md"


class Wire:
    """Plays the caller of the sans-IO host: allocates JSON-RPC ids and records the exchange."""

    def __init__(self) -> None:
        self.next_id = 2
        self.ids: dict[int, int] = {}
        self.requests: list[dict[str, Any]] = []

    def request(self, send: SendRequest) -> dict[str, Any]:
        """The JSON-RPC request the caller would write for ``send``."""
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": send.method}
        message["params"] = send.params
        self.ids[self.next_id] = send.token
        self.next_id += 1
        self.requests.append(message)
        return message


def assert_same_request(sent: dict[str, Any], spec: dict[str, Any]) -> None:
    """Method, id and params as in the spec; ``_meta`` present and well-formed (CAP-10)."""
    assert sent["id"] == spec["id"]
    assert sent["method"] == spec["method"]
    assert strip_meta(sent["params"]) == spec["params"]
    meta = sent["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == "2026-07-28"
    assert meta[META_CLIENT_CAPABILITIES] == {"extensions": {EXTENSION_ID: {}}}
    assert set(meta[META_CLIENT_INFO]) == {"name", "version"}


def test_example_message_flow_replayed_message_by_message() -> None:
    """LIST-13, VER-04, VER-12, DIR-12..DIR-18, HELD-03..HELD-06, APR-01, APR-02, DIR-15, DIR-16."""
    host = Host()
    wire = Wire()

    # Connect: the server declares the extension with directoryRead; nothing is fetched.
    connected = host.connect(LABEL, CAPABILITIES)
    assert not of(connected, SendRequest)
    features = host.features(LABEL)
    assert features is not None
    assert features.directory_read

    # id 2: skills/list.
    send = one(host.list_skills(LABEL), SendRequest)
    assert_same_request(wire.request(send), LIST_REQUEST)
    effects = host.on_response(LABEL, wire.ids[2], result=LIST_RESPONSE["result"])
    # "The host records the entry under the identity (docs-server, skill://...) ... and fetches
    # nothing further."
    assert kinds(effects) == ["RegistryUpdated", "ListingComplete"]
    assert one(effects, RegistryUpdated).added == (ex.SKILL_MD_URI,)
    assert one(effects, ListingComplete).entries == 1
    assert host.registry.get(LABEL, ex.SKILL_MD_URI) is not None
    [item] = host.catalog()
    assert (item.origin, item.name, item.description) == (
        LABEL,
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    assert '"docs-server"' in item.model_line
    assert item.qualified == "docs-server:pdf-processing"

    # "Later the model asks to load the skill. The host obtains user approval, binding it to the
    # three {uri, digest} pairs above, then reads SKILL.md."
    prompt = one(host.load(LABEL, ex.SKILL_MD_URI), RequestApproval)
    assert prompt.reason is ApprovalReason.NEW
    assert prompt.origin == LABEL
    assert {(r.uri, r.digest) for r in prompt.manifest if not isinstance(r, str)} == {
        (f"skill://pdf-processing/{p}", ex.EXPECTED[p][1]) for p in ex.FILES
    }
    effects = host.approve(prompt.prompt_id)
    assert kinds(effects) == ["ApprovalGranted", "SendRequest"]
    assert one(effects, ApprovalGranted).persisted
    entry = host.registry.get(LABEL, ex.SKILL_MD_URI)
    assert entry is not None
    assert host.approvals.approved(LABEL, ex.SKILL_MD_URI, entry.resource_set) is not None

    # id 3: resources/read SKILL.md.
    assert_same_request(wire.request(one(effects, SendRequest)), READ_REQUEST)
    effects = host.on_response(LABEL, wire.ids[3], result=READ_RESPONSE["result"])
    # "checks that the content is 151 bytes and matches the manifest's SHA-256 digest, parses the
    # frontmatter and confirms it equals the entry's frontmatter, then places the content in the
    # model's context tagged as originating from docs-server."
    assert kinds(effects) == ["DeliverToModel", "SkillLoaded"]
    delivered = one(effects, DeliverToModel)
    assert delivered.kind is DeliveryKind.SKILL
    assert delivered.origin == LABEL
    assert delivered.verified
    assert delivered.content == ex.SKILL_MD
    assert len(delivered.content) == 151
    assert 'MCP server "docs-server"' in delivered.model_text
    # "The host is now acting on the skill and holds this entry."
    assert host.state(LABEL, ex.SKILL_MD_URI) is LoadState.ACTING
    assert one(effects, SkillLoaded).entry.resource_set == entry.resource_set

    # id 4: "The instructions reference templates/. The model lists the directory, and the host
    # routes this to docs-server."
    send = one(host.list_dir(LABEL, ex.SKILL_MD_URI, "templates/"), SendRequest)
    assert send.origin == LABEL
    assert_same_request(wire.request(send), DIR_REQUEST)
    effects = host.on_response(LABEL, wire.ids[4], result=DIR_RESPONSE["result"])
    listing = one(effects, DirectoryListing)
    # "credit-note.md is not in the held entry's resources ... The host does not surface it as a
    # file of the skill."
    assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]
    assert listing.hidden == (CREDIT_URI,)
    assert listing.looks_changed
    assert "credit-note" not in listing.model_text
    assert not of(effects, SendRequest)  # a change hint, not an automatic refetch

    # id 5: "The model reads invoice.md, which is listed. The host issues resources/read, verifies
    # size and digest against the held entry, and returns the content."
    send = one(host.read(LABEL, ex.SKILL_MD_URI, "templates/invoice.md"), SendRequest)
    message = wire.request(send)
    assert message["id"] == 5
    assert message["method"] == "resources/read"
    assert strip_meta(message["params"]) == {"uri": INVOICE_URI}
    effects = host.on_response(LABEL, wire.ids[5], result=read_result(INVOICE_URI, ex.INVOICE))
    delivered = one(effects, DeliverToModel)
    assert (delivered.kind, delivered.verified, delivered.content) == (
        DeliveryKind.SKILL_FILE,
        True,
        ex.INVOICE,
    )

    # "... would treat a read of it [credit-note.md] as a verification failure." No read is sent
    # for it; the failure's only wire traffic is the refresh, id 6: skills/get (VER-16).
    effects = host.read(LABEL, ex.SKILL_MD_URI, "templates/credit-note.md")
    assert kinds(effects) == ["VerificationFailed", "SendRequest"]
    assert one(effects, VerificationFailed).error.kind == "unlisted"
    assert_same_request(wire.request(one(effects, SendRequest)), GET_REQUEST)

    effects = host.on_response(LABEL, wire.ids[6], result=GET_RESPONSE["result"])
    # "The resources set differs from the one the user approved, so the prior approval is revoked.
    # The host presents the skill as changed, obtains fresh approval bound to the new set ..."
    revoked = one(effects, ApprovalRevoked)
    assert [k[0] for k in revoked.changes.added] == [CREDIT_URI]
    changed = one(effects, SkillChanged)
    assert changed.requires_reapproval
    assert not changed.skill_md_changed
    assert "added templates/credit-note.md (39 bytes)" in changed.message
    prompt = one(effects, RequestApproval)
    assert prompt.reason is ApprovalReason.CHANGED
    assert prompt.changes is not None
    assert prompt.total_size == 254
    assert not of(effects, SendRequest)
    assert host.state(LABEL, ex.SKILL_MD_URI) is LoadState.REAPPROVAL

    # "... and only then reads credit-note.md under the refreshed entry."
    refused = host.read(LABEL, ex.SKILL_MD_URI, "templates/credit-note.md")
    assert one(refused, Refused).code is RefusalCode.REAPPROVAL_REQUIRED
    effects = host.approve(prompt.prompt_id)
    assert kinds(effects) == ["ApprovalGranted", "HeldEntryReplaced"]
    assert len(one(effects, HeldEntryReplaced).entry.resources) == 4
    send = one(host.read(LABEL, ex.SKILL_MD_URI, "templates/credit-note.md"), SendRequest)
    message = wire.request(send)
    assert strip_meta(message["params"]) == {"uri": CREDIT_URI}
    effects = host.on_response(LABEL, send.token, result=read_result(CREDIT_URI, ex.CREDIT_NOTE))
    delivered = one(effects, DeliverToModel)
    assert delivered.verified
    assert delivered.content == ex.CREDIT_NOTE

    # The whole exchange: exactly the spec's methods, in the spec's order, and nothing else.
    assert [m["method"] for m in wire.requests] == [
        "skills/list",
        "resources/read",
        "resources/directory/read",
        "resources/read",
        "skills/get",
        "resources/read",
    ]
    # The persisted approval is now bound to the four-file set.
    [record] = host.approvals
    assert len(record.resources) == 4
    assert not record.revoked


# Requirement rows: DIR-15
def test_example_flow_with_an_explicit_refresh_DIR_15() -> None:
    """The host may refresh after the directory read shows a change, without a failed read."""
    host = Host()
    host.connect(LABEL, CAPABILITIES)
    send = one(host.list_skills(LABEL), SendRequest)
    host.on_response(LABEL, send.token, result=LIST_RESPONSE["result"])
    prompt = one(host.load(LABEL, ex.SKILL_MD_URI), RequestApproval)
    send = one(host.approve(prompt.prompt_id), SendRequest)
    host.on_response(LABEL, send.token, result=READ_RESPONSE["result"])
    send = one(host.list_dir(LABEL, ex.SKILL_MD_URI, "templates"), SendRequest)
    host.on_response(LABEL, send.token, result=DIR_RESPONSE["result"])
    send = one(host.refresh(LABEL, ex.SKILL_MD_URI), SendRequest)
    assert (send.method, strip_meta(send.params)) == ("skills/get", GET_REQUEST["params"])
    effects = host.on_response(LABEL, send.token, result=GET_RESPONSE["result"])
    assert kinds(effects)[:3] == ["ApprovalRevoked", "SkillChanged", "RequestApproval"]
