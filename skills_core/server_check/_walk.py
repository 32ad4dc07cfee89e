"""The walk of the live-server check: the requests in order, and the rule each answer is held to.

The generator methods of :class:`Walk` yield :class:`~skills_core.server_check.Call` values and
take :class:`~skills_core.server_check.Reply` values back (see :mod:`skills_core.server_check`
for the order and the bounds). Private: driven only through
:func:`skills_core.server_check.check_server`. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from ..check import SkillReport, ValidationReport, validate_entries
from ..digest import compute_digest, is_valid_digest, verify_bytes
from ..errors import (
    FrontmatterError,
    RemoteProtocolError,
    URIError,
    VerificationError,
    VerificationKind,
    quote_for_message,
)
from ..frontmatter import compare_frontmatter, parse_frontmatter
from ..host.budgets import entry_footprint
from ..jsonvalue import JSONValue
from ..messages import (
    DirectoryChild,
    Era,
    decode_read_result,
    parse_directory_result,
    parse_list_skills_envelope,
    with_meta,
)
from ..rules import RULES
from ..spec import EXTENSION_ID, SKILL_MD
from ..uri import SkillURI
from ..validation import Finding, validate_skill_md
from ._types import INVALID_PARAMS, Call, CheckBounds, Reply, ServerCheckResult

__all__ = ["Walk", "StoppedError"]

#: The legacy era's "resource not found" (2025-11-25), accepted for resources/read there.
_LEGACY_NOT_FOUND: Final = -32002
#: The name of the skill and the file the error probes ask for.
_ABSENT: Final = "skills-core-check-absent"
_DIRECTORY_MIME: Final = "inode/directory"


class StoppedError(Exception):
    """A request got no answer: the walk ends (the failure is recorded)."""


@dataclass(frozen=True, slots=True)
class _Row:
    """A file record of an entry, as far as it is usable: a size or digest that breaks the entry
    rules (reported as such) is ``None``, and what is left is still checked."""

    uri: str
    size: int | None
    digest: str | None


@dataclass(slots=True)
class _Skill:
    """A listed skill as the walk uses it: read leniently from the entry as listed, so that an
    entry that breaks a rule still has its files read and checked (as a verifier would)."""

    uri: str
    item: object
    root: str | None
    frontmatter: Mapping[str, object] | None
    rows: tuple[_Row, ...] | None  # None: "dynamic", or no array of records
    dynamic: bool

    @classmethod
    def of(cls, uri: str, item: object) -> _Skill:
        fields = item if isinstance(item, dict) else {}
        frontmatter = fields.get("frontmatter")
        resources = fields.get("resources")
        rows: dict[str, _Row] = {}
        if isinstance(resources, list):
            for record in resources:
                if not isinstance(record, dict) or not isinstance(record.get("uri"), str):
                    continue
                size = record.get("size")
                digest = record.get("digest")
                rows.setdefault(
                    record["uri"],
                    _Row(
                        uri=record["uri"],
                        size=size if type(size) is int and size >= 0 else None,
                        digest=digest if is_valid_digest(digest) else None,
                    ),
                )
        try:
            root: str | None = SkillURI.parse(uri).root
        except URIError:
            root = None
        return cls(
            uri=uri,
            item=item,
            root=root,
            frontmatter=frontmatter if isinstance(frontmatter, dict) else None,
            rows=tuple(rows.values()) if isinstance(resources, list) else None,
            dynamic=resources == "dynamic",
        )

    @property
    def files(self) -> dict[str, _Row]:
        return {row.uri: row for row in self.rows or ()}


@dataclass(slots=True)
class Walk:
    """The state of one check (see the module docstring)."""

    label: str
    era: Era
    meta: Mapping[str, JSONValue] | None
    bounds: CheckBounds
    directory_read: bool = False
    server: list[Finding] = field(default_factory=list)
    per_skill: dict[str, list[Finding]] = field(default_factory=dict)
    once: dict[tuple[str, str], int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    requests: int = 0
    files_read: int = 0
    bytes_read: int = 0
    directories: int = 0
    items: list[object] = field(default_factory=list)
    skills: list[_Skill] = field(default_factory=list)
    #: Files no entry lists but a directory read or resources/list gives: (skill, file, source).
    candidates: dict[tuple[str, str], str] = field(default_factory=dict)
    incomplete: set[str] = field(default_factory=set)
    reports: list[SkillReport] = field(default_factory=list)
    duplicates: list[tuple[str, int]] = field(default_factory=list)

    # -- findings ---------------------------------------------------------------------------

    def add(
        self,
        *,
        code: str,
        message: str,
        skill: str | None = None,
        file: str | None = None,
        field: str = "",
    ) -> None:
        """Record a finding of ``code`` about ``skill`` (or the server), at ``file``."""
        finding = Finding(
            severity=RULES[code].severity,
            field=field,
            code=code,
            message=message,
            file=file or skill,
        )
        if skill is not None and skill in self.per_skill:
            self.per_skill[skill].append(finding)
        else:
            self.server.append(finding)

    def add_once(self, *, code: str, method: str, message: str, field: str = "") -> None:
        """A server-wide finding said once per code and method; repeats are counted."""
        key = (code, method)
        if key in self.once:
            self.once[key] += 1
            return
        self.once[key] = 0
        self.add(code=code, message=message, field=field)

    def stop_short(self, what: str) -> None:
        """A bound was reached: say so once per bound (``server-check-incomplete``)."""
        if what not in self.incomplete:
            self.incomplete.add(what)
            self.add(code="server-check-incomplete", message=what)

    # -- requests ---------------------------------------------------------------------------

    def ask(self, method: str, params: dict[str, JSONValue]) -> Generator[Call, Reply, Reply]:
        reply = yield Call(method, with_meta(params, self.meta))
        if reply.failure is not None:
            about = params.get("uri")
            what = f" of {about}" if isinstance(about, str) else ""
            self.failures.append(f"server {self.label!r}: {method}{what}: {reply.failure}")
            raise StoppedError
        self.requests += 1
        return reply

    # -- the walk ---------------------------------------------------------------------------

    def run(self, capabilities: object) -> Generator[Call, Reply, None]:
        if not self.capabilities(capabilities):
            return
        yield from self.listing()
        self.validate()
        for skill in list(self.skills):
            yield from self.get(skill)
        for skill in self.skills:
            yield from self.read_files(skill)
        yield from self.directories_walk()
        yield from self.resources_list()
        yield from self.probe_candidates()
        yield from self.error_codes()

    def result(self) -> ServerCheckResult:
        """The findings so far, as a :class:`ServerCheckResult`."""
        for (code, method), more in self.once.items():
            if not more:
                continue
            for index, found in enumerate(self.server):
                if found.code == code and found.message.startswith(method):
                    self.server[index] = replace(
                        found, message=f"{found.message} (and in {more} more answers)"
                    )
                    break
        skills = tuple(
            replace(report, findings=tuple(self.per_skill[report.uri]))
            if report.uri is not None and report.uri in self.per_skill
            else report
            for report in self.reports
        )
        return ServerCheckResult(
            label=self.label,
            era=self.era,
            report=ValidationReport(skills=skills, findings=tuple(self.server)),
            failures=tuple(self.failures),
            requests=self.requests,
            files_read=self.files_read,
            bytes_read=self.bytes_read,
        )

    # 1. capabilities -----------------------------------------------------------------------

    def capabilities(self, capabilities: object) -> bool:
        """Check the declaration; False when there is no extension to check."""
        caps = capabilities if isinstance(capabilities, dict) else {}
        extensions = caps.get("extensions")
        settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
        if not isinstance(settings, dict):
            shown = "nothing" if settings is None else quote_for_message(settings, 80)
            self.add(
                code="server-no-extension",
                field=f"/capabilities/extensions/{EXTENSION_ID}",
                message=f"the capabilities declare {shown} for {EXTENSION_ID}, not an object of "
                "settings: a host sends it no skills/list",
            )
            return False
        if not isinstance(caps.get("resources"), dict):
            self.add(
                code="server-no-resources",
                field="/capabilities/resources",
                message="the extension is declared without the resources capability",
            )
        value = settings.get("directoryRead", False)
        if not isinstance(value, bool):
            self.add(
                code="server-directory-read-value",
                field=f"/capabilities/extensions/{EXTENSION_ID}/directoryRead",
                message=f"directoryRead is {quote_for_message(value, 40)}, not true or false: "
                "a host takes it as false",
            )
        self.directory_read = value is True
        return True

    def cacheable(self, method: str, result: Mapping[str, object], *, cache: bool) -> None:
        """The 2026-07-28 fields of a result: resultType, and ttlMs / cacheScope when ``cache``."""
        if self.era is not Era.MODERN:
            return
        result_type = result.get("resultType")
        if result_type != "complete":
            shown = "no resultType" if result_type is None else f"resultType {result_type!r}"
            self.add_once(
                code="server-result-type",
                method=method,
                field="/resultType",
                message=f'{method} answered with {shown}, not "complete"',
            )
        if not cache:
            return
        ttl = result.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            shown = "no ttlMs" if ttl is None else f"ttlMs {quote_for_message(ttl, 40)}"
            self.add_once(
                code="server-ttl-ms",
                method=method,
                field="/ttlMs",
                message=f"{method} answered with {shown}, not a whole number of milliseconds",
            )
        scope = result.get("cacheScope")
        if scope not in ("public", "private"):
            shown = (
                "no cacheScope" if scope is None else f"cacheScope {quote_for_message(scope, 40)}"
            )
            self.add_once(
                code="server-cache-scope",
                method=method,
                field="/cacheScope",
                message=f'{method} answered with {shown}, not "public" or "private"',
            )

    def bad_result(self, exc: RemoteProtocolError, *, method: str, skill: str | None) -> None:
        code = (
            "server-result-type" if exc.kind == "unsupported-result-type" else "server-bad-result"
        )
        self.add(code=code, skill=skill, message=f"{method}: {exc.message}")

    # 2. the listing ------------------------------------------------------------------------

    def listing(self) -> Generator[Call, Reply, None]:
        bounds = self.bounds
        seen: set[str] = set()
        cursors: set[str] = set()
        cursor: str | None = None
        pages = held = size = 0
        while True:
            params: dict[str, JSONValue] = {} if cursor is None else {"cursor": cursor}
            reply = yield from self.ask("skills/list", params)
            pages += 1
            if reply.error_code is not None:
                if cursor is None:
                    self.add(
                        code="server-list-failed",
                        message=f"skills/list answered {reply.describe_error()}",
                    )
                else:
                    self.add(
                        code="server-cursor-failed",
                        field="/nextCursor",
                        message=f"skills/list with the cursor {quote_for_message(cursor, 80)} "
                        f"(page {pages - 1}'s nextCursor) answered {reply.describe_error()}",
                    )
                return
            try:
                envelope = parse_list_skills_envelope(reply.result)
            except RemoteProtocolError as exc:
                self.bad_result(exc, method="skills/list", skill=None)
                return
            assert isinstance(reply.result, dict)
            self.cacheable("skills/list", reply.result, cache=True)
            held += max(1, len(envelope.items)) - len(envelope.items)
            for item in envelope.items:
                footprint = entry_footprint(item).bytes
                if held >= bounds.max_entries or size + footprint > bounds.max_listing_bytes:
                    self.stop_short(
                        f"the listing was read up to {held:,} entries and {size:,} listing bytes "
                        f"(bounds: {bounds.max_entries:,} entries, {bounds.max_listing_bytes:,} "
                        "bytes); the rest is not checked"
                    )
                    return
                held += 1
                uri = item.get("uri") if isinstance(item, dict) else None
                if isinstance(uri, str):
                    if uri in seen:
                        self.duplicates.append((uri, pages))
                        continue
                    seen.add(uri)
                size += footprint
                self.items.append(item)
            following = envelope.next_cursor
            if following is None:
                return
            if following in cursors or following == cursor:
                self.add(
                    code="server-cursor-loop",
                    field="/nextCursor",
                    message=f"skills/list page {pages} gives the cursor "
                    f"{quote_for_message(following, 80)} again: the listing would never end",
                )
                return
            if pages >= bounds.max_pages:
                self.stop_short(f"the listing was read up to {pages:,} pages (the bound)")
                return
            cursors.add(following)
            cursor = following

    def validate(self) -> None:
        """The entry rules and the Agent Skills rules on every listed entry."""
        report = validate_entries(
            {"skills": self.items}, source=self.label, limits=self.bounds.limits
        )
        for skill_report, item in zip(report.skills, self.items, strict=True):
            uri = skill_report.uri
            self.reports.append(skill_report)
            if uri is None:
                self.server.extend(replace(f, file=None) for f in skill_report.findings)
                continue
            self.per_skill[uri] = [replace(f, file=uri) for f in skill_report.findings]
            self.skills.append(_Skill.of(uri, item))
        for uri, page in self.duplicates:
            self.add(
                code="server-duplicate-skill",
                skill=uri,
                message=f"{uri} is listed again on page {page}: pages overlap",
            )

    # 3. skills/get -------------------------------------------------------------------------

    def get(self, skill: _Skill) -> Generator[Call, Reply, None]:
        reply = yield from self.ask("skills/get", {"uri": skill.uri})
        if reply.error_code is not None:
            self.add(
                code="server-get-failed",
                skill=skill.uri,
                message=f"skills/get of a listed skill answered {reply.describe_error()}",
            )
            return
        result = reply.result
        if not isinstance(result, dict) or not isinstance(result.get("skill"), dict):
            self.add(
                code="server-bad-result",
                skill=skill.uri,
                field="/skill",
                message="skills/get answered with no 'skill' object",
            )
            return
        self.cacheable("skills/get", result, cache=True)
        if "nextCursor" in result:
            self.add(
                code="server-get-cursor",
                skill=skill.uri,
                field="/nextCursor",
                message="skills/get answered with a nextCursor",
            )
        got = result["skill"]
        assert isinstance(got, dict)
        if got.get("uri") != skill.uri:
            self.add(
                code="server-get-uri",
                skill=skill.uri,
                field="/skill/uri",
                message=f"skills/get answered with the entry of "
                f"{quote_for_message(got.get('uri'), 120)}",
            )
            return
        if _canonical(got) != _canonical(skill.item):
            self.add(
                code="server-get-differs",
                skill=skill.uri,
                message=f"skills/get and skills/list give different entries: {_difference(skill.item, got)}",
            )

    # 4. files ------------------------------------------------------------------------------

    def read_files(self, skill: _Skill) -> Generator[Call, Reply, None]:
        if skill.dynamic:
            self.add(
                code="server-dynamic-skill",
                skill=skill.uri,
                message='resources is "dynamic": only SKILL.md is read, for its frontmatter',
            )
        limits = self.bounds.limits
        total = 0
        rows = skill.rows or ()
        if skill.uri not in skill.files:  # SKILL.md unlisted (or dynamic): read it all the same
            rows = (_Row(uri=skill.uri, size=None, digest=None), *rows)
        for number, row in enumerate(rows):
            total += row.size or 0
            if number >= limits.max_resources or total > limits.max_total_bytes:
                self.stop_short(
                    f"{skill.uri}: files past the per-skill limits ({limits.max_resources} files, "
                    f"{limits.max_total_bytes:,} bytes) are not read"
                )
                return
            if self.bytes_read + (row.size or 0) > self.bounds.max_read_bytes:
                self.stop_short(
                    f"the bytes read from the server reached the bound "
                    f"({self.bounds.max_read_bytes:,}); the files after it are not read"
                )
                return
            data = yield from self.read(skill, row.uri, row.size)
            if data is None:
                continue
            self.verify(skill, row, data)
            if row.uri == skill.uri:
                self.skill_md(skill, data)

    def verify(self, skill: _Skill, row: _Row, data: bytes) -> None:
        """Size, then digest (VER-06, VER-07), as far as the record gives them."""
        try:
            if row.size is not None and row.digest is not None:
                verify_bytes(data, size=row.size, digest=row.digest, uri=row.uri)
            elif row.size is not None and len(data) != row.size:
                self.add(
                    code="server-size-mismatch",
                    skill=skill.uri,
                    file=row.uri,
                    message=f"{row.uri}: size mismatch: the entry lists {row.size} bytes but "
                    f"the content has {len(data)}",
                )
            elif row.digest is not None and compute_digest(data) != row.digest:
                verify_bytes(data, size=len(data), digest=row.digest, uri=row.uri)
        except VerificationError as exc:
            code = (
                "server-size-mismatch"
                if exc.kind is VerificationKind.SIZE
                else "server-digest-mismatch"
            )
            self.add(code=code, skill=skill.uri, file=row.uri, message=exc.message)

    def read(
        self, skill: _Skill, uri: str, size: int | None
    ) -> Generator[Call, Reply, bytes | None]:
        """Read one listed file: its bytes, or None (the finding recorded)."""
        reply = yield from self.ask("resources/read", {"uri": uri})
        if reply.error_code is not None:
            self.add(
                code="server-read-failed",
                skill=skill.uri,
                file=uri,
                message=f"resources/read of a listed file answered {reply.describe_error()}",
            )
            return None
        try:
            data = decode_read_result(reply.result, uri=uri, max_size=size)
        except VerificationError as exc:
            code = (
                "server-size-mismatch"
                if exc.kind is VerificationKind.SIZE
                else "server-read-contents"
            )
            self.add(code=code, skill=skill.uri, file=uri, message=exc.message)
            return None
        except RemoteProtocolError as exc:
            self.bad_result(exc, method="resources/read", skill=skill.uri)
            return None
        self.files_read += 1
        self.bytes_read += len(data)
        return data

    def skill_md(self, skill: _Skill, data: bytes) -> None:
        """The served SKILL.md's frontmatter against the entry's (ENTRY-04, VER-11)."""
        try:
            parsed = parse_frontmatter(data)
        except FrontmatterError:
            for finding in validate_skill_md(data):  # the parse failure, placed
                self.per_skill.setdefault(skill.uri, []).append(replace(finding, file=skill.uri))
            return
        if skill.frontmatter is None:
            return  # the entry rules said so already
        for difference in compare_frontmatter(parsed.data, skill.frontmatter):
            self.add(
                code="server-frontmatter-mismatch",
                skill=skill.uri,
                file=skill.uri,
                field="/frontmatter" + difference.pointer,
                message=str(difference),
            )

    # 5. directories ------------------------------------------------------------------------

    def directories_walk(self) -> Generator[Call, Reply, None]:
        skills = [s for s in self.skills if s.root is not None]
        if not self.directory_read:
            if skills:
                root = skills[0].root
                assert root is not None
                reply = yield from self.ask("resources/directory/read", {"uri": root})
                if reply.error_code is None:
                    self.add(
                        code="server-directory-undeclared",
                        skill=skills[0].uri,
                        file=root,
                        message="resources/directory/read is answered, but directoryRead is "
                        "not declared: no host will send it",
                    )
            return
        for skill in skills:
            if skill.rows is not None:
                yield from self.walk_skill(skill)

    def walk_skill(self, skill: _Skill) -> Generator[Call, Reply, None]:
        root = skill.root
        assert root is not None
        files = skill.files
        known: set[str] = {root}
        for uri in files:
            parent = uri.rpartition("/")[0]
            while parent.startswith(root + "/") and parent not in known:
                known.add(parent)
                parent = parent.rpartition("/")[0]
        queue = sorted(known)
        walked: set[str] = set()
        while queue:
            directory = queue.pop(0)
            if directory in walked:
                continue
            walked.add(directory)
            if self.directories >= self.bounds.max_directories:
                self.stop_short(
                    f"{self.bounds.max_directories:,} directories were read (the bound); the "
                    "others are not"
                )
                return
            self.directories += 1
            children = yield from self.read_directory(skill, directory)
            if children is None:
                continue
            listed = {child.uri for child in children}
            for child in children:
                if child.is_directory:
                    if child.uri not in known:
                        queue.append(child.uri)
                elif child.uri in known:
                    self.add(
                        code="server-directory-disagrees",
                        skill=skill.uri,
                        file=child.uri,
                        message=f"resources/directory/read of {directory} lists the directory "
                        f"{child.uri} without the mimeType {_DIRECTORY_MIME}",
                    )
                elif child.uri not in files:
                    self.candidates.setdefault((skill.uri, child.uri), "resources/directory/read")
            for uri in sorted(files):
                if uri.rpartition("/")[0] == directory and uri not in listed:
                    self.add(
                        code="server-directory-disagrees",
                        skill=skill.uri,
                        file=uri,
                        message=f"resources/directory/read of {directory} does not list {uri}, "
                        "which the entry lists",
                    )

    def read_directory(
        self, skill: _Skill, directory: str
    ) -> Generator[Call, Reply, list[DirectoryChild] | None]:
        children: list[DirectoryChild] = []
        cursors: set[str] = set()
        cursor: str | None = None
        for _page in range(self.bounds.max_pages):
            params: dict[str, JSONValue] = {"uri": directory}
            if cursor is not None:
                params["cursor"] = cursor
            reply = yield from self.ask("resources/directory/read", params)
            if reply.error_code is not None:
                if cursor is None:
                    self.add(
                        code="server-directory-unanswered",
                        skill=skill.uri,
                        file=directory,
                        message=f"directoryRead is declared, but resources/directory/read of "
                        f"{directory} answered {reply.describe_error()}",
                    )
                else:
                    self.add(
                        code="server-cursor-failed",
                        skill=skill.uri,
                        file=directory,
                        message=f"resources/directory/read of {directory} with the cursor "
                        f"{quote_for_message(cursor, 80)} answered {reply.describe_error()}",
                    )
                return None
            room = self.bounds.max_directory_entries - len(children)
            try:
                found, dropped, following = parse_directory_result(
                    reply.result, directory_uri=directory, max_items=room
                )
            except RemoteProtocolError as exc:
                self.bad_result(exc, method="resources/directory/read", skill=skill.uri)
                return None
            assert isinstance(reply.result, dict)
            self.cacheable("resources/directory/read", reply.result, cache=False)
            children.extend(found)
            for reason in dropped:
                self.add(
                    code="server-directory-disagrees",
                    skill=skill.uri,
                    file=directory,
                    message=f"resources/directory/read of {directory}: {reason}",
                )
            if following is None:
                return children
            if len(children) >= self.bounds.max_directory_entries:
                self.stop_short(f"{directory}: more children than the bound; the rest not read")
                return children
            if following in cursors:
                self.add(
                    code="server-cursor-loop",
                    skill=skill.uri,
                    file=directory,
                    message=f"resources/directory/read of {directory} gives the cursor "
                    f"{quote_for_message(following, 80)} again",
                )
                return children
            cursors.add(following)
            cursor = following
        self.stop_short(f"{directory}: more pages than the bound; the rest not read")
        return children

    # 6. resources/list ---------------------------------------------------------------------

    def resources_list(self) -> Generator[Call, Reply, None]:
        by_uri = {s.uri: s for s in self.skills}
        roots = [(s.root + "/", s) for s in self.skills if s.root is not None and s.rows]
        cursors: set[str] = set()
        cursor: str | None = None
        for _page in range(self.bounds.max_pages):
            params: dict[str, JSONValue] = {} if cursor is None else {"cursor": cursor}
            reply = yield from self.ask("resources/list", params)
            result = reply.result
            if reply.error_code is not None or not isinstance(result, dict):
                what = reply.describe_error() if reply.error_code is not None else "no object"
                self.add(
                    code="server-resources-list",
                    message=f"resources/list answered {what}",
                )
                return
            resources = result.get("resources")
            if not isinstance(resources, list):
                self.add(
                    code="server-bad-result",
                    field="/resources",
                    message="resources/list answered with no 'resources' array",
                )
                return
            for item in resources[: self.bounds.max_directory_entries]:
                if isinstance(item, dict) and isinstance(item.get("uri"), str):
                    self.listed_resource(item, by_uri, roots)
            following = result.get("nextCursor")
            if not isinstance(following, str):
                return
            if following in cursors or following == cursor:
                self.add(
                    code="server-cursor-loop",
                    field="/nextCursor",
                    message=f"resources/list gives the cursor {quote_for_message(following, 80)} "
                    "again: the listing would never end",
                )
                return
            cursors.add(following)
            cursor = following
        self.stop_short("resources/list was read up to the bound on pages")

    def listed_resource(
        self,
        item: Mapping[str, object],
        by_uri: Mapping[str, _Skill],
        roots: Sequence[tuple[str, _Skill]],
    ) -> None:
        uri = item["uri"]
        assert isinstance(uri, str)
        skill = by_uri.get(uri)
        if skill is not None and skill.frontmatter is not None:
            frontmatter = skill.frontmatter
            for key in ("name", "description"):
                value = item.get(key)
                if key in item and value != frontmatter.get(key):
                    self.add(
                        code="server-resources-list",
                        skill=uri,
                        file=uri,
                        field=f"/{key}",
                        message=f"resources/list gives SKILL.md the {key} "
                        f"{quote_for_message(value, 80)}; the frontmatter's is "
                        f"{quote_for_message(frontmatter.get(key), 80)}",
                    )
            return
        if item.get("mimeType") == _DIRECTORY_MIME:
            return
        for prefix, owner in roots:
            if uri.startswith(prefix) and owner.files and uri not in owner.files:
                self.candidates.setdefault((owner.uri, uri), "resources/list")

    # probes of files no entry lists --------------------------------------------------------

    def probe_candidates(self) -> Generator[Call, Reply, None]:
        for number, ((skill, uri), source) in enumerate(sorted(self.candidates.items())):
            if number >= self.bounds.max_probes:
                self.stop_short(
                    f"{len(self.candidates):,} files no entry lists were found; the first "
                    f"{self.bounds.max_probes} were read"
                )
                return
            reply = yield from self.ask("resources/read", {"uri": uri})
            contents = reply.result.get("contents") if isinstance(reply.result, dict) else None
            if reply.error_code is None and isinstance(contents, list) and contents:
                self.add(
                    code="server-unlisted-file",
                    skill=skill,
                    file=uri,
                    message=f"{uri} is served (it is in {source}), but {skill}'s entry does "
                    "not list it",
                )
            elif source == "resources/list":
                self.add(
                    code="server-resources-list",
                    skill=skill,
                    file=uri,
                    message=f"resources/list gives {uri}, which no entry lists and resources/read "
                    "does not serve",
                )
            else:
                self.add(
                    code="server-directory-disagrees",
                    skill=skill,
                    file=uri,
                    message=f"a directory read lists {uri}, which the entry does not list and "
                    "resources/read does not serve",
                )

    # 7. error codes ------------------------------------------------------------------------

    def error_codes(self) -> Generator[Call, Reply, None]:
        listed = {s.uri for s in self.skills}
        base = next((s for s in self.skills if s.root is not None), None)
        if base is not None and base.root is not None:
            parent = base.root.rpartition("/")[0]
            parent = parent if parent.endswith(":/") is False and "://" in parent else ""
            scheme_root = parent or base.root.partition("://")[0] + ":/"
        else:
            scheme_root = "skill:/"
        absent = f"{scheme_root}/{_ABSENT}/{SKILL_MD}"
        number = 2
        while absent in listed:
            absent = f"{scheme_root}/{_ABSENT}-{number}/{SKILL_MD}"
            number += 1
        reply = yield from self.ask("skills/get", {"uri": absent})
        self.expect_invalid_params(reply, "skills/get", absent, "ERR-01")
        file_root = (
            base.root
            if base is not None and base.root is not None
            else absent[: -len(SKILL_MD) - 1]
        )
        missing = f"{file_root}/{_ABSENT}.md"
        files = base.files if base is not None else {}
        if missing not in files:
            reply = yield from self.ask("resources/read", {"uri": missing})
            self.expect_invalid_params(reply, "resources/read", missing, "ERR-03")
        unanswered = any(f.code == "server-directory-unanswered" for f in self._all())
        if self.directory_read and base is not None and not unanswered:
            reply = yield from self.ask("resources/directory/read", {"uri": base.uri})
            self.expect_invalid_params(reply, "resources/directory/read", base.uri, "ERR-02")

    def _all(self) -> list[Finding]:
        return [*self.server, *(f for found in self.per_skill.values() for f in found)]

    def expect_invalid_params(self, reply: Reply, method: str, uri: str, rule: str) -> None:
        accepted = {INVALID_PARAMS}
        if method == "resources/read" and self.era is Era.LEGACY:
            accepted.add(_LEGACY_NOT_FOUND)
        if reply.error_code in accepted:
            return
        what = "a result" if reply.error_code is None else reply.describe_error()
        self.add(
            code="server-error-code",
            field=method,
            message=f"{method} of {uri}, which does not exist, answered {what}, not error "
            f"{INVALID_PARAMS} ({rule})",
        )


def _canonical(value: object) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _difference(listed: object, got: object) -> str:
    """What differs between two entries, briefly."""
    if not isinstance(listed, dict) or not isinstance(got, dict):
        return "the entries are not both objects"
    keys = sorted(
        key
        for key in set(listed) | set(got)
        if _canonical(listed.get(key)) != _canonical(got.get(key))
    )
    if keys == ["resources"]:
        before = _manifest(listed.get("resources"))
        after = _manifest(got.get("resources"))
        changed = sorted(
            uri for uri in set(before) | set(after) if before.get(uri) != after.get(uri)
        )
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        return f"the manifests differ on {shown or 'their order'}"
    return "they differ in " + ", ".join(quote_for_message(key, 40) for key in keys)


def _manifest(resources: object) -> dict[str, str]:
    if not isinstance(resources, list):
        return {"": _canonical(resources)}
    return {str(item.get("uri")): _canonical(item) for item in resources if isinstance(item, dict)}
