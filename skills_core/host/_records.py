"""Private records of the host state machine: pending requests, origins, sessions, prompts.

Theory of operation
-------------------
:class:`~skills_core.host.machine.Host` keeps its mutable bookkeeping in the plain records below,
one per pending request, connected origin, load session and open prompt, plus a few pure helpers
(manifest comparison, directory children from a manifest, JSON-RPC error fields). Nothing here
decides anything: every state change happens in ``machine.py`` through the transition table of
:mod:`skills_core.host.states`. Private: the names may change at any time.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from skills_core.entry import SkillEntry, SkillResource
from skills_core.errors import quote_for_message
from skills_core.host.approvals import ManifestChanges, manifest_changes
from skills_core.host.framing import one_line
from skills_core.host.registry import ListingWalk
from skills_core.host.states import LoadState
from skills_core.jsonvalue import JSONValue
from skills_core.messages import DirectoryChild, ServerFeatures

#: ``(origin label, skill uri)``: the identity of a skill (ORG-01).
Key: TypeAlias = tuple[str, str]


class Purpose(enum.Enum):
    LIST = "list"
    GET_LOAD = "get-load"
    GET_REFRESH = "get-refresh"
    GET_CONFIRM = "get-confirm"
    GET_PREVIEW = "get-preview"
    READ_SKILL_MD = "read-skill-md"
    READ_FILE = "read-file"
    READ_PREVIEW = "read-preview"
    READ_RESOURCE = "read-resource"
    DIR_READ = "dir-read"


@dataclass(slots=True, eq=False)
class Pending:
    origin: str
    method: str
    purpose: Purpose
    uri: str
    key: Key | None = None
    generation: int = 0
    resource: SkillResource | None = None
    entry: SkillEntry | None = None
    failure_uri: str | None = None
    ref: str | None = None
    walk: ListingWalk | None = None
    children: list[DirectoryChild] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Listing:
    token: int
    walk: ListingWalk
    seen: dict[str, SkillEntry] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)


@dataclass(slots=True, eq=False)
class Origin:
    label: str
    features: ServerFeatures
    meta: dict[str, JSONValue] | None
    connected: bool = True
    bytes_fetched: int = 0
    listing: Listing | None = None


@dataclass(slots=True, eq=False)
class Session:
    key: Key
    state: LoadState = LoadState.IDLE
    generation: int = 0
    entry: SkillEntry | None = None
    held: SkillEntry | None = None
    pending_entry: SkillEntry | None = None
    prompt_id: int | None = None
    per_load: bool = False
    per_load_fields: frozenset[str] = frozenset()
    per_load_exec: bool = False
    bytes_used: int = 0
    refresh_token: int | None = None
    settled: set[str] = field(default_factory=set)


@dataclass(slots=True, eq=False)
class Prompt:
    key: Key
    generation: int = 0
    entry: SkillEntry | None = None
    widening: tuple[str, ...] = ()
    cross_to: str | None = None
    cross_uri: str | None = None


def differs(a: SkillEntry, b: SkillEntry) -> bool:
    """True when ``b`` is not the same manifest as ``a`` (APR-02, SIL-19)."""
    if a.is_dynamic or b.is_dynamic:
        return a.is_dynamic != b.is_dynamic
    return a.resource_set != b.resource_set


def set_of(entry: SkillEntry) -> frozenset[tuple[str, str, int]] | None:
    return None if entry.is_dynamic else entry.resource_set


def changes_between(old: SkillEntry, new: SkillEntry) -> tuple[bool, ManifestChanges]:
    """``(skill_md_changed, ManifestChanges)`` between two entries of one skill."""
    changes = manifest_changes(set_of(old), set_of(new), root=new.root)
    old_md = old.resource(old.uri)
    new_md = new.resource(new.uri)
    same_md = (
        old_md is not None
        and new_md is not None
        and old_md.key == new_md.key
        and old.frontmatter == new.frontmatter
    )
    return not same_md, changes


def manifest_children(entry: SkillEntry, directory: str) -> tuple[DirectoryChild, ...]:
    """The direct children of ``directory`` according to the manifest (DIR-12)."""
    prefix = directory + "/"
    children: dict[str, DirectoryChild] = {}
    assert not isinstance(entry.resources, str)
    for resource in entry.resources:
        if not resource.uri.startswith(prefix):
            continue
        name, sep, _ = resource.uri[len(prefix) :].partition("/")
        uri = prefix + name
        if uri not in children:
            children[uri] = DirectoryChild(
                uri=uri, name=name, is_directory=bool(sep), mime_type=None
            )
    return tuple(sorted(children.values(), key=lambda c: c.name))


def error_fields(error: object) -> tuple[int | None, str]:
    """``(code, message)`` of a JSON-RPC error object; tolerant of malformed ones."""
    if not isinstance(error, Mapping):
        return None, f"malformed error response {quote_for_message(error)}"
    code = error.get("code")
    message = error.get("message")
    code_value = code if isinstance(code, int) and not isinstance(code, bool) else None
    text = message if isinstance(message, str) else "error without a message"
    prefix = f"error {code_value}: " if code_value is not None else "error: "
    return code_value, prefix + one_line(text, 300)
