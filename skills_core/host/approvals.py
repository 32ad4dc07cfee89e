"""Content-bound approvals: records bound to a manifest, revocation, grants, and persistence.

Theory of operation
-------------------
An approval is the user's consent to load one skill, identified by ``(origin label, skill uri)``
(ORG-02, ORG-03), **as it was when they saw it**: the record holds the set of ``(uri, digest,
size)`` of every file in the entry observed at approval (APR-01; ``size`` too, so a size-only
change counts, SIL-18). Order does not matter and duplicates cannot occur (SIL-19, ENTRY-08).

* :meth:`ApprovalStore.approved` answers only for the exact set. Any other set, whether a file was
  rotated, added or removed, does not match (APR-02).
* :meth:`ApprovalStore.observe` is called with every entry the host receives for a skill, from
  ``skills/list`` or ``skills/get``. When an active record's set differs, the record is revoked, and
  the revoked record is kept so that the next prompt can say what changed. Nothing is polled; a
  record changes only when an entry is observed or the user acts (APR-03).
* Grants that widen what a skill may do live **in** the record and so are bound to the same set
  and revoked with it: ``granted_fields`` lists permission-widening frontmatter fields the user
  granted (``allowed-tools``, ``hooks``, ...; APR-08, APR-09), ``allow_exec`` approves code execution
  while acting on the skill (APR-11..APR-13).
* A ``"dynamic"`` skill cannot be bound to content: the store refuses to record it, so no approval
  of one is ever persisted (APR-04). The host keeps a dynamic skill's approval on the load itself.
  Cross-origin read approvals are single-use and never reach the store either (SIL-25).
* Approval of a skill is approval of that skill alone: a nested skill is another key (APR-06).

Persistence format (version 1)
------------------------------
:meth:`ApprovalStore.to_json` / :meth:`ApprovalStore.from_json` (and the text forms
:meth:`~ApprovalStore.dumps` / :meth:`~ApprovalStore.loads`) use this JSON document::

    {
      "version": 1,
      "approvals": [
        {
          "origin": "docs-server",                     // host-assigned label, non-empty string
          "skill": "skill://pdf-processing/SKILL.md",   // the skill's SKILL.md URI, exact string
          "status": "approved",                        // or "revoked" (kept to show what changed)
          "resources": [                                // the bound set, sorted by uri, unique uris
            {"uri": "skill://pdf-processing/SKILL.md",
             "digest": "sha256:99b7...b19e",            // "sha256:" + 64 lowercase hex
             "size": 151}                               // integer, 0 .. 2**53-1
          ],
          "grants": ["allowed-tools"],                  // granted widening fields, sorted, unique
          "exec": false                                 // code execution while acting approved
        }
      ]
    }

Every member shown is required. Loading is strict and fails closed: an unknown ``version``, an
unknown or missing member at any level, a wrong type, a malformed digest or URI, or two records for
the same ``(origin, skill)`` raise :class:`ApprovalsFileError`; a malformed file never loads as an
empty store. Unknown members are **rejected rather than preserved** because a member this version
does not understand might narrow an approval (an expiry, a scope), and ignoring it would widen it;
a later format that adds members bumps ``version``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, final

from ..digest import is_valid_digest
from ..entry import ResourceKey, SkillEntry
from ..errors import SkillsError, URIError, quote_for_message
from ..jsonvalue import JSONValue, loads_strict
from ..spec import MAX_SAFE_INTEGER
from ..uri import SkillURI

__all__ = [
    "APPROVALS_FORMAT_VERSION",
    "ApprovalsFileError",
    "ManifestChanges",
    "manifest_changes",
    "approvable_set",
    "same_manifest",
    "entry_changes",
    "ApprovalRecord",
    "ApprovalStore",
]

#: The ``version`` this module writes and the only one it reads.
APPROVALS_FORMAT_VERSION: Final = 1

_RECORD_KEYS: Final = frozenset({"origin", "skill", "status", "resources", "grants", "exec"})
_RESOURCE_KEYS: Final = frozenset({"uri", "digest", "size"})
_TOP_KEYS: Final = frozenset({"version", "approvals"})


class ApprovalsFileError(SkillsError, ValueError):
    """A persisted approvals document is malformed or of an unknown version.

    Attributes:
        kind: ``"approvals-file"``.
        pointer: JSON pointer to the offending member (``""`` for the whole document).
    """

    pointer: str

    def __init__(self, message: str, *, pointer: str = "") -> None:
        where = pointer or "document"
        super().__init__(f"approvals file: {where}: {message}", kind="approvals-file")
        self.pointer = pointer


def _short(uri: str, root: str | None) -> str:
    if root is not None and uri.startswith(root + "/"):
        return uri[len(root) + 1 :]
    return uri


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestChanges:
    """The difference between two manifests, file by file.

    Attributes:
        added: Files only in the new set.
        removed: Files only in the old set.
        changed: ``(old, new)`` for files whose digest or size changed.
        to_dynamic: The new entry is ``"dynamic"`` (nothing can be compared).
        from_dynamic: The old entry was ``"dynamic"``.
        root: The skill root, used to shorten URIs in :meth:`describe`.
    """

    added: tuple[ResourceKey, ...] = ()
    removed: tuple[ResourceKey, ...] = ()
    changed: tuple[tuple[ResourceKey, ResourceKey], ...] = ()
    to_dynamic: bool = False
    from_dynamic: bool = False
    root: str | None = None

    def __bool__(self) -> bool:
        return bool(
            self.added or self.removed or self.changed or self.to_dynamic or self.from_dynamic
        )

    def touches(self, uri: str) -> bool:
        """True when the file ``uri`` was added, removed or changed."""
        return (
            any(k[0] == uri for k in self.added)
            or any(k[0] == uri for k in self.removed)
            or any(old[0] == uri for old, _ in self.changed)
        )

    def describe(self) -> str:
        """Say what changed in one line, e.g. ``added templates/credit-note.md (39 bytes)``."""
        parts: list[str] = []
        if self.to_dynamic:
            parts.append('its content is now generated ("dynamic"), so it cannot be verified')
        if self.from_dynamic:
            parts.append('it now publishes a manifest instead of "dynamic"')
        parts.extend(f"added {_short(u, self.root)} ({s} bytes)" for u, _, s in self.added)
        parts.extend(f"removed {_short(u, self.root)}" for u, _, _ in self.removed)
        for old, new in self.changed:
            detail = f"{old[2]} -> {new[2]} bytes" if old[2] != new[2] else "same size, new digest"
            parts.append(f"changed {_short(old[0], self.root)} ({detail})")
        return "; ".join(parts) if parts else "no change"


def manifest_changes(
    old: frozenset[ResourceKey] | None,
    new: frozenset[ResourceKey] | None,
    *,
    root: str | None = None,
) -> ManifestChanges:
    """Compare two manifests given as ``(uri, digest, size)`` sets; ``None`` means ``"dynamic"``.

    Args:
        old: The earlier set (e.g. the approved or held one).
        new: The later set.
        root: The skill root, for shorter descriptions.
    """
    if old is None or new is None:
        return ManifestChanges(
            to_dynamic=new is None and old is not None,
            from_dynamic=old is None and new is not None,
            root=root,
        )
    old_by_uri = {k[0]: k for k in old - new}
    new_by_uri = {k[0]: k for k in new - old}
    changed = tuple(
        sorted(
            ((old_by_uri[u], new_by_uri[u]) for u in old_by_uri.keys() & new_by_uri.keys()),
        )
    )
    added = tuple(sorted(k for u, k in new_by_uri.items() if u not in old_by_uri))
    removed = tuple(sorted(k for u, k in old_by_uri.items() if u not in new_by_uri))
    return ManifestChanges(added=added, removed=removed, changed=changed, root=root)


def approvable_set(entry: SkillEntry) -> frozenset[ResourceKey] | None:
    """The set an approval of ``entry`` binds to, or None for a dynamic skill (APR-04)."""
    return None if entry.is_dynamic else entry.resource_set


def same_manifest(a: SkillEntry, b: SkillEntry) -> bool:
    """True when ``b`` is the same manifest as ``a``, so an approval of one covers the other
    (APR-02, SIL-19: the set of ``(uri, digest, size)``, in any order; two dynamic entries match).
    """
    if a.is_dynamic or b.is_dynamic:
        return a.is_dynamic == b.is_dynamic
    return a.resource_set == b.resource_set


def entry_changes(old: SkillEntry, new: SkillEntry) -> tuple[bool, ManifestChanges]:
    """``(skill_md_changed, changes)`` between two entries of one skill: whether SKILL.md itself
    (its row or the frontmatter) changed, so a copy in context is stale (HELD-07), and the files
    added, removed and changed."""
    changes = manifest_changes(approvable_set(old), approvable_set(new), root=new.root)
    old_md = old.resource(old.uri)
    new_md = new.resource(new.uri)
    same_md = (
        old_md is not None
        and new_md is not None
        and old_md.key == new_md.key
        and old.frontmatter == new.frontmatter
    )
    return not same_md, changes


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRecord:
    """One skill's approval, bound to the manifest observed when it was given.

    Attributes:
        origin: Host-assigned server label.
        skill_uri: The skill's SKILL.md URI.
        resources: The bound set of ``(uri, digest, size)``.
        granted_fields: Permission-widening frontmatter fields the user granted (APR-09).
        allow_exec: Code execution while acting on the skill was approved (APR-13).
        revoked: True once an entry with another set was observed; then it authorises nothing.
    """

    origin: str
    skill_uri: str
    resources: frozenset[ResourceKey]
    granted_fields: frozenset[str] = field(default_factory=frozenset)
    allow_exec: bool = False
    revoked: bool = False

    def to_json(self) -> dict[str, JSONValue]:
        """Return the record in the persistence format (see the module docstring)."""
        grants: list[JSONValue] = []
        grants.extend(sorted(self.granted_fields))
        return {
            "origin": self.origin,
            "skill": self.skill_uri,
            "status": "revoked" if self.revoked else "approved",
            "resources": [
                {"uri": uri, "digest": digest, "size": size}
                for uri, digest, size in sorted(self.resources)
            ],
            "grants": grants,
            "exec": self.allow_exec,
        }


@final
class ApprovalStore:
    """Every approval the host holds, keyed by ``(origin label, skill uri)``; never by uri alone.

    The store is plain data: it does no I/O. Persist it with :meth:`dumps` and load it with
    :meth:`loads`.
    """

    __slots__ = ("_records",)

    def __init__(self, records: Iterable[ApprovalRecord] = ()) -> None:
        """Create a store holding ``records``.

        Raises:
            ValueError: two records share an ``(origin, skill_uri)``.
        """
        self._records: dict[tuple[str, str], ApprovalRecord] = {}
        for record in records:
            key = (record.origin, record.skill_uri)
            if key in self._records:
                raise ValueError(f"two approval records for {key!r}")
            self._records[key] = record

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[ApprovalRecord]:
        return iter(list(self._records.values()))

    def record(self, origin: str, skill_uri: str) -> ApprovalRecord | None:
        """Return the record for the skill, active or revoked, or None."""
        return self._records.get((origin, skill_uri))

    def approved(
        self, origin: str, skill_uri: str, resources: frozenset[ResourceKey]
    ) -> ApprovalRecord | None:
        """Return the active record when it is bound to exactly ``resources`` (APR-01, APR-02)."""
        record = self._records.get((origin, skill_uri))
        if record is None or record.revoked or record.resources != resources:
            return None
        return record

    def grant(
        self,
        origin: str,
        skill_uri: str,
        resources: frozenset[ResourceKey],
        *,
        granted_fields: Iterable[str] = (),
        allow_exec: bool = False,
    ) -> ApprovalRecord:
        """Record the user's approval of the skill as the set ``resources``.

        Replaces any earlier record for the skill, with its grants: grants are given anew with
        every approval.

        Raises:
            ValueError: ``resources`` is empty (a dynamic skill has nothing to bind to; APR-04).
        """
        if not resources:
            raise ValueError(
                f"{skill_uri}: an approval must be bound to a non-empty manifest; dynamic skills "
                "are approved per load and never recorded"
            )
        record = ApprovalRecord(
            origin=origin,
            skill_uri=skill_uri,
            resources=resources,
            granted_fields=frozenset(granted_fields),
            allow_exec=allow_exec,
        )
        self._records[(origin, skill_uri)] = record
        return record

    def observe(
        self, origin: str, skill_uri: str, resources: frozenset[ResourceKey] | None
    ) -> ApprovalRecord | None:
        """Take note of an entry for the skill; revoke an active approval of another set (APR-02).

        Args:
            origin: Server label.
            skill_uri: Skill URI.
            resources: The entry's set, or ``None`` when the entry is ``"dynamic"``.

        Returns:
            The record as it was before revocation when this call revoked it, else None.
        """
        key = (origin, skill_uri)
        record = self._records.get(key)
        if record is None or record.revoked or record.resources == resources:
            return None
        self._records[key] = replace(record, revoked=True)
        return record

    def revoke(self, origin: str, skill_uri: str) -> ApprovalRecord | None:
        """Revoke the skill's approval; return the record as it was, or None when not active."""
        key = (origin, skill_uri)
        record = self._records.get(key)
        if record is None or record.revoked:
            return None
        self._records[key] = replace(record, revoked=True)
        return record

    def forget_origin(self, origin: str) -> int:
        """Remove every record of ``origin``; return how many were removed."""
        keys = [key for key in self._records if key[0] == origin]
        for key in keys:
            del self._records[key]
        return len(keys)

    # -- persistence ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, JSONValue]:
        """Return the store in the version-1 persistence format (sorted, so diffs stay small)."""
        return {
            "version": APPROVALS_FORMAT_VERSION,
            "approvals": [self._records[key].to_json() for key in sorted(self._records)],
        }

    def dumps(self) -> str:
        """Return :meth:`to_json` as indented JSON text ending with a newline."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, document: object) -> ApprovalStore:
        """Load a store from a decoded version-1 document.

        Raises:
            ApprovalsFileError: the document is malformed or of an unknown version.
        """
        if not isinstance(document, Mapping):
            raise ApprovalsFileError("the document must be a JSON object")
        _check_keys(document, _TOP_KEYS, "")
        version = document["version"]
        if type(version) is not int or version != APPROVALS_FORMAT_VERSION:
            raise ApprovalsFileError(
                f"unsupported version {quote_for_message(version)}; this library reads version "
                f"{APPROVALS_FORMAT_VERSION}",
                pointer="/version",
            )
        approvals = document["approvals"]
        if not isinstance(approvals, list):
            raise ApprovalsFileError("must be an array", pointer="/approvals")
        store = cls()
        for index, item in enumerate(approvals):
            record = _record_from_json(item, f"/approvals/{index}")
            key = (record.origin, record.skill_uri)
            if key in store._records:
                raise ApprovalsFileError(
                    f"a second record for {record.skill_uri} from {record.origin!r}",
                    pointer=f"/approvals/{index}",
                )
            store._records[key] = record
        return store

    @classmethod
    def loads(cls, text: str | bytes) -> ApprovalStore:
        """Parse JSON text (duplicate keys, NaN and Infinity refused) and call :meth:`from_json`.

        Raises:
            ApprovalsFileError: the text is not valid JSON or the document is malformed.
        """
        try:
            document = loads_strict(text)
        except ValueError as exc:
            raise ApprovalsFileError(f"not valid JSON: {exc}") from None
        return cls.from_json(document)


def _check_keys(obj: Mapping[Any, Any], allowed: frozenset[str], pointer: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        raise ApprovalsFileError(
            f"unknown member {quote_for_message(unknown[0])}; this version does not accept "
            "unknown members",
            pointer=pointer,
        )
    missing = sorted(allowed - set(obj))
    if missing:
        raise ApprovalsFileError(f"missing member {missing[0]!r}", pointer=pointer)


def _record_from_json(item: object, pointer: str) -> ApprovalRecord:
    if not isinstance(item, Mapping):
        raise ApprovalsFileError("must be an object", pointer=pointer)
    _check_keys(item, _RECORD_KEYS, pointer)
    origin = item["origin"]
    if not isinstance(origin, str) or not origin:
        raise ApprovalsFileError("must be a non-empty string", pointer=f"{pointer}/origin")
    skill = item["skill"]
    if not isinstance(skill, str):
        raise ApprovalsFileError("must be a string", pointer=f"{pointer}/skill")
    try:
        SkillURI.parse(skill)
    except URIError as exc:
        raise ApprovalsFileError(exc.message, pointer=f"{pointer}/skill") from None
    status = item["status"]
    if status not in ("approved", "revoked"):
        raise ApprovalsFileError(
            f'must be "approved" or "revoked", not {quote_for_message(status)}',
            pointer=f"{pointer}/status",
        )
    resources = item["resources"]
    if not isinstance(resources, list) or not resources:
        raise ApprovalsFileError("must be a non-empty array", pointer=f"{pointer}/resources")
    keys: set[ResourceKey] = set()
    uris: set[str] = set()
    for index, res in enumerate(resources):
        where = f"{pointer}/resources/{index}"
        if not isinstance(res, Mapping):
            raise ApprovalsFileError("must be an object", pointer=where)
        _check_keys(res, _RESOURCE_KEYS, where)
        uri, digest, size = res["uri"], res["digest"], res["size"]
        if not isinstance(uri, str) or not uri:
            raise ApprovalsFileError("must be a non-empty string", pointer=f"{where}/uri")
        if uri in uris:
            raise ApprovalsFileError(f"{uri} is listed twice", pointer=f"{where}/uri")
        if not is_valid_digest(digest):
            raise ApprovalsFileError(
                f"{quote_for_message(digest)} is not a sha256 digest", pointer=f"{where}/digest"
            )
        if type(size) is not int or not 0 <= size <= MAX_SAFE_INTEGER:
            raise ApprovalsFileError(
                f"must be an integer in 0..{MAX_SAFE_INTEGER}", pointer=f"{where}/size"
            )
        assert isinstance(digest, str)
        uris.add(uri)
        keys.add((uri, digest, size))
    grants = item["grants"]
    if (
        not isinstance(grants, list)
        or not all(isinstance(g, str) and g for g in grants)
        or len(set(grants)) != len(grants)
    ):
        raise ApprovalsFileError(
            "must be an array of distinct non-empty strings", pointer=f"{pointer}/grants"
        )
    allow_exec = item["exec"]
    if not isinstance(allow_exec, bool):
        raise ApprovalsFileError("must be true or false", pointer=f"{pointer}/exec")
    return ApprovalRecord(
        origin=origin,
        skill_uri=skill,
        resources=frozenset(keys),
        granted_fields=frozenset(grants),
        allow_exec=allow_exec,
        revoked=status == "revoked",
    )
