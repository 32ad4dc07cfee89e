"""The rules of the ``server`` family: what ``skills-core check --server`` holds a live server to.

Rows of :data:`skills_core.rules.RULES` (see that module for what each field is for), kept apart
so that the registry stays readable; the codes are emitted by :mod:`skills_core.server_check`.
Pure data.
"""

from __future__ import annotations

from typing import Final

from ._rule import Rule
from .validation import Severity

__all__ = ["SERVER_ROWS"]

_E = Severity.ERROR
_W = Severity.WARNING
_N = Severity.NOTE

SERVER_ROWS: Final[tuple[Rule, ...]] = (
    # --- server -----------------------------------------------------------------------------
    Rule(
        code="server-no-extension", family="server", severity=_E,
        summary="The server does not declare the Skills extension",
        help="Put \"io.modelcontextprotocol/skills\": {} (an object) under "
        "capabilities.extensions in the server/discover (or initialize) result.",
        why="A server advertises the extension with an object of settings under "
        "`capabilities.extensions` (CAP-01); a host sends no `skills/list` to a server that "
        "has not declared it (CAP-08), so nothing else could be checked.",
        bad='"capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": '
        'true}}',
        good='"capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": '
        '{}}}',
    ),
    Rule(
        code="server-no-resources", family="server", severity=_E,
        summary="The server declares the extension but not the resources capability",
        help="Declare \"resources\": {} beside the extension.",
        why="A server that declares the extension also declares `resources` (CAP-07): skill "
        "files are read with `resources/read`, and a host does not use the extension without "
        "it (SIL-16).",
        bad='"capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}}',
        good='"capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": '
        '{}}}',
    ),
    Rule(
        code="server-directory-read-value", family="server", severity=_W,
        summary="'directoryRead' is not a JSON boolean",
        help="Write true or false (or leave it out for false).",
        why="`directoryRead` is a boolean (CAP-02); only JSON `true` enables directory reads, so "
        "`\"true\"` or `1` disables them in a careful host and enables them in a careless one "
        "(SIL-15).",
        bad='{"io.modelcontextprotocol/skills": {"directoryRead": "true"}}',
        good='{"io.modelcontextprotocol/skills": {"directoryRead": true}}',
    ),
    Rule(
        code="server-list-failed", family="server", severity=_E,
        summary="skills/list answered with an error",
        help="Implement skills/list: answer every page with a result (an empty one is fine).",
        why="A server that declares the extension implements `skills/list` (CAP-04, LIST-01); "
        "an empty or partial listing is allowed (LIST-04), an error is not.",
        bad='{"error": {"code": -32601, "message": "Method not found"}}',
        good='{"result": {"resultType": "complete", "skills": [], "ttlMs": 0, '
        '"cacheScope": "private"}}',
    ),
    Rule(
        code="server-get-failed", family="server", severity=_E,
        summary="skills/get of a listed skill answered with an error",
        help="Answer skills/get for every skill you serve, listed or not.",
        why="A server answers `skills/get` for every skill it serves (GET-01, GET-03); a host "
        "refreshes a skill with it after a failed verification (VER-09).",
        bad='skills/get {"uri": "skill://pdf-processing/SKILL.md"} -> error -32602',
        good='skills/get {"uri": "skill://pdf-processing/SKILL.md"} -> {"skill": {...}, ...}',
    ),
    Rule(
        code="server-read-failed", family="server", severity=_E,
        summary="resources/read of a listed file answered with an error",
        help="Serve every file an entry lists, or stop listing it.",
        why="Skill files are read with `resources/read` (VER-01); an entry lists every file of "
        "the skill (ENTRY-08), so a listed file the server does not serve is a file no host can "
        "load (DIR-17).",
        bad='"resources": [..., {"uri": "skill://pdf-processing/templates/gone.md", ...}] -> '
        "error -32602",
        good="every listed URI reads back",
    ),
    Rule(
        code="server-bad-result", family="server", severity=_E,
        summary="A result does not have the shape its method defines",
        help="Answer with the result object the extension defines for the method "
        "(skills/list: skills[]; skills/get: skill; resources/read: contents[]; "
        "resources/directory/read: resources[]).",
        why="The results are `ListSkillsResult`, `GetSkillResult`, `ReadResourceResult` and "
        "`ReadResourceDirectoryResult` (LIST-01, GET-01, VER-01, DIR-04); a host treats any "
        "other shape as a failed request (SIL-14).",
        bad='{"result": {"entries": [...]}}', good='{"result": {"skills": [...], ...}}',
    ),
    Rule(
        code="server-result-type", family="server", severity=_E,
        summary="A result's 'resultType' is missing or not \"complete\"",
        help="Set \"resultType\": \"complete\" on skills/list, skills/get and directory results "
        "(2026-07-28).",
        why="`resultType` is `\"complete\"` on `ListSkillsResult`, `GetSkillResult` and "
        "`ReadResourceDirectoryResult` (LIST-03, GET-04, DIR-05); a host never takes another "
        "result type as a listing (SIL-14).",
        bad='{"skills": [...], "ttlMs": 0, "cacheScope": "private"}',
        good='{"resultType": "complete", "skills": [...], "ttlMs": 0, "cacheScope": "private"}',
    ),
    Rule(
        code="server-ttl-ms", family="server", severity=_E,
        summary="A result's 'ttlMs' is missing or not a whole number of milliseconds",
        help="Add \"ttlMs\": N (an integer, 0 or more) to every skills/list page and skills/get "
        "result (2026-07-28).",
        why="`ListSkillsResult` and `GetSkillResult` extend `CacheableResult`: `ttlMs` is "
        "REQUIRED (LIST-09, GET-05); a host treats a missing one as 0 (SIL-14).",
        bad='{"resultType": "complete", "skills": [...], "cacheScope": "public"}',
        good='{"resultType": "complete", "skills": [...], "ttlMs": 300000, '
        '"cacheScope": "public"}',
    ),
    Rule(
        code="server-cache-scope", family="server", severity=_E,
        summary="A result's 'cacheScope' is missing or neither \"public\" nor \"private\"",
        help="Add \"cacheScope\": \"public\" or \"private\" to every skills/list page and "
        "skills/get result (2026-07-28).",
        why="`cacheScope` is REQUIRED on `CacheableResult` (LIST-09, GET-05); a host treats a "
        "missing one as private (SIL-14).",
        bad='{"resultType": "complete", "skills": [...], "ttlMs": 300000}',
        good='{"resultType": "complete", "skills": [...], "ttlMs": 300000, '
        '"cacheScope": "public"}',
    ),
    Rule(
        code="server-duplicate-skill", family="server", severity=_E,
        summary="The listing gives one skill URI twice",
        help="Page by a stable order (a keyset cursor): each skill once, on one page.",
        why="Pagination mirrors the base list methods (LIST-07) and entries are atomic "
        "(LIST-08): a skill twice means pages overlap, so a host cannot tell which entry is "
        "current.",
        bad="page 1: [a, b]  page 2: [b, c]", good="page 1: [a, b]  page 2: [c]",
    ),
    Rule(
        code="server-cursor-failed", family="server", severity=_E,
        summary="A nextCursor the server gave fails when sent back",
        help="Accept every cursor you hand out (make cursors self-contained, or keep them valid "
        "for their ttlMs).",
        why="When `nextCursor` is present the client sends it back as `cursor` (LIST-07, "
        "DIR-09); a cursor that fails cuts the listing short.",
        bad='page 1 -> "nextCursor": "p2"; {"cursor": "p2"} -> error -32602',
        good='page 1 -> "nextCursor": "p2"; {"cursor": "p2"} -> page 2',
    ),
    Rule(
        code="server-cursor-loop", family="server", severity=_E,
        summary="A nextCursor repeats, so the listing never ends",
        help="Give a new cursor for each page and none on the last one.",
        why="When `nextCursor` is absent the listing is over (LIST-07); a cursor given again "
        "leads back to a page already read, and a host must stop it (SIL-17).",
        bad='every page: "nextCursor": "again"', good='last page: no "nextCursor"',
    ),
    Rule(
        code="server-get-uri", family="server", severity=_E,
        summary="skills/get answered with the entry of another skill",
        help="Answer skills/get with the entry whose uri is the URI asked for.",
        why="`params.uri` names the skill's SKILL.md and the result is that skill's entry "
        "(GET-02, GET-06); a host refuses an answer for another URI (SIL-13).",
        bad='skills/get {"uri": "skill://a/SKILL.md"} -> {"skill": {"uri": "skill://b/SKILL.md"'
        ", ...}}",
        good='skills/get {"uri": "skill://a/SKILL.md"} -> {"skill": {"uri": "skill://a/SKILL.md"'
        ", ...}}",
    ),
    Rule(
        code="server-get-differs", family="server", severity=_E,
        summary="skills/get gives another entry than skills/list for the same skill",
        help="Build both answers from the same entry.",
        why="The `skill` of `skills/get` is identical in shape and meaning to the listed entry "
        "(ENTRY-01, GET-06); a host that refreshes a listed skill and sees another manifest "
        "revokes its approval (APR-02).",
        bad="list: SKILL.md 151 bytes; get: SKILL.md 152 bytes",
        good="list and get: SKILL.md 151 bytes, the same digest",
    ),
    Rule(
        code="server-get-cursor", family="server", severity=_W,
        summary="A skills/get result carries a nextCursor",
        help="Leave nextCursor out of skills/get results.",
        why="The `skills/get` result carries no pagination cursor (GET-09); a host ignores it "
        "and warns (SIL-14).",
        bad='{"skill": {...}, "nextCursor": "x"}', good='{"skill": {...}}',
    ),
    Rule(
        code="server-read-contents", family="server", severity=_E,
        summary="A resources/read answer is not one content item for the URI read",
        help="Answer with exactly one content item whose uri is the URI asked for, with text "
        "(UTF-8) or blob (base64), not both.",
        why="A host hashes the UTF-8 of `text` or the base64-decoded `blob` of the one item "
        "whose `uri` is the requested one, and refuses anything else (VER-17).",
        bad='"contents": [{"uri": "skill://a/x.md", "text": "..."}, {"uri": "skill://a/y.md", '
        '...}]',
        good='"contents": [{"uri": "skill://a/x.md", "text": "..."}]',
    ),
    Rule(
        code="server-size-mismatch", family="server", severity=_E,
        summary="A file's bytes are not as many as its entry's 'size'",
        help="List the byte count of what resources/read returns (CRLF and a BOM count).",
        why="`size` is the length of the bytes the digest covers (ENTRY-11); a read of another "
        "length is a verification failure, and a host uses none of it (VER-07, VER-08).",
        bad='"size": 151, read: 159 bytes (CRLF line ends)', good='"size": 151, read: 151 bytes',
    ),
    Rule(
        code="server-digest-mismatch", family="server", severity=_E,
        summary="A file's SHA-256 is not its entry's 'digest'",
        help="Compute the digest over exactly the bytes resources/read returns, and list the "
        "current one.",
        why="Each SkillResource carries the digest of the file at its uri (VER-05); a host "
        "verifies every file it reads and uses none that fails (VER-06, VER-08).",
        bad='"digest": "sha256:99b7...", read: sha256:1f3a...',
        good='"digest": "sha256:99b7...", read: sha256:99b7...',
    ),
    Rule(
        code="server-frontmatter-mismatch", family="server", severity=_E,
        summary="The entry's frontmatter is not the frontmatter of the SKILL.md served",
        help="Publish the SKILL.md frontmatter verbatim as JSON: every field, the same values.",
        why="The entry's `frontmatter` is identical in content to the SKILL.md it describes "
        "(ENTRY-04); a host compares them field by field and treats a difference as a digest "
        "mismatch (VER-10, VER-11).",
        bad="SKILL.md: allowed-tools: Bash; entry frontmatter: no allowed-tools",
        good="SKILL.md and entry: allowed-tools: Bash",
    ),
    Rule(
        code="server-directory-unanswered", family="server", severity=_E,
        summary="'directoryRead' is declared, but resources/directory/read of a skill "
        "directory fails",
        help="Serve resources/directory/read for every directory of every skill (the skill "
        "roots included), or do not declare directoryRead.",
        why="A server that declares `directoryRead` implements the method (CAP-05) for every "
        "directory of the skill namespaces it serves as files (DIR-10).",
        bad='"directoryRead": true; resources/directory/read skill://pdf-processing -> error '
        "-32601",
        good='"directoryRead": true; resources/directory/read skill://pdf-processing -> '
        '{"resources": [...]}',
    ),
    Rule(
        code="server-directory-undeclared", family="server", severity=_W,
        summary="resources/directory/read is answered, but 'directoryRead' is not declared",
        help="Declare \"directoryRead\": true, or answer the method as unknown (-32601).",
        why="A host never sends the method to a server that has not declared it (CAP-06), so "
        "what the server serves there is out of every host's reach; an undeclared method "
        "answers as the base protocol does for an unknown one (ERR-05).",
        bad='{"io.modelcontextprotocol/skills": {}}; directory/read -> {"resources": [...]}',
        good='{"io.modelcontextprotocol/skills": {"directoryRead": true}}',
    ),
    Rule(
        code="server-directory-disagrees", family="server", severity=_W,
        summary="A directory read and the skill's entry disagree",
        help="List every direct child in resources/directory/read (files and folders), and "
        "list in the entry exactly the files served.",
        why="A directory read lists every direct child (DIR-06); a file of the manifest missing "
        "from it is no longer served (DIR-17), and a child the manifest lacks makes a host "
        "refresh the skill (DIR-13, DIR-15).",
        bad="entry: templates/invoice.md; directory read of templates: (empty)",
        good="entry and directory read: templates/invoice.md",
    ),
    Rule(
        code="server-unlisted-file", family="server", severity=_E,
        summary="A file inside a skill is served, but its entry does not list it",
        help="List every file of the skill in its entry, or stop serving the file.",
        why="An array `resources` is complete: every file of the skill, once (ENTRY-08); a "
        "host never reads a file its entry does not list (DIR-13, HELD-03), so an unlisted file "
        "means the entry is stale or incomplete.",
        bad="entry: SKILL.md; served: SKILL.md, templates/credit-note.md",
        good="entry and served: SKILL.md, templates/credit-note.md",
    ),
    Rule(
        code="server-error-code", family="server", severity=_E,
        summary="A request for something that does not exist is not answered -32602",
        help="Answer -32602 (Invalid params) for an unknown skill (skills/get), file "
        "(resources/read) or directory (resources/directory/read).",
        why="An unknown skill is -32602 (ERR-01), a URI that is not a directory is -32602 "
        "(ERR-02), a file the server does not serve is -32602 (ERR-03); a host tells \"not a "
        "skill here\" from a failure by that code (ERR-07).",
        bad='skills/get {"uri": "skill://nope/SKILL.md"} -> error -32603',
        good='skills/get {"uri": "skill://nope/SKILL.md"} -> error -32602',
    ),
    Rule(
        code="server-resources-list", family="server", severity=_W,
        summary="resources/list disagrees with the skill entries",
        help="Give a SKILL.md resource the frontmatter's name and description, and list in "
        "resources/list only files that are served and listed in their skill's entry.",
        why="The SKILL.md resource's `name` is the frontmatter `name` and its `description` "
        "the frontmatter `description` (FMT-08, FMT-09); a file inside a skill that its entry "
        "does not list breaks the entry's completeness (ENTRY-08).",
        bad='resources/list: {"uri": "skill://pdf-processing/SKILL.md", "name": "PDF tools"}',
        good='resources/list: {"uri": "skill://pdf-processing/SKILL.md", '
        '"name": "pdf-processing"}',
    ),
    Rule(
        code="server-dynamic-skill", family="server", severity=_N,
        summary="A skill's resources are \"dynamic\": its files cannot be verified",
        help="Publish a manifest when the content is stable; hosts may decline dynamic skills.",
        why="A server whose content is generated sets `resources` to `\"dynamic\"` (ENTRY-15); "
        "such a skill offers no integrity and cannot be content-bound, and hosts may decline it "
        "(ENTRY-16). Only its SKILL.md frontmatter is checked (VER-10).",
        bad='"resources": "dynamic"', good='"resources": [{"uri": ..., "digest": ..., '
        '"size": ...}]',
    ),
    Rule(
        code="server-check-incomplete", family="server", severity=_N,
        summary="The check stopped before the end: a bound was reached",
        help="Raise the bound named (see skills-core check --help), or check a smaller "
        "server; what was read is reported.",
        why="The check reads within a host's bounds (entries, listing bytes, pages, bytes read "
        "per server, directory entries), so a large or hostile server costs bounded time and "
        "memory (WG-04, WG-05, SIL-17).",
        bad="a listing of 20,000 skills (over the 10,000 entries a default host reads)",
        good="a listing of 500 skills",
    ),
)  # fmt: skip
