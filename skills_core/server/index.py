"""The digest index: what a filesystem source already hashed and parsed, kept between runs (pure).

Theory of operation
-------------------
A server that starts walks, reads and hashes every file of every skill before its first answer;
most restarts find the tree as it was. The *digest index* is a file the operator opts into
(``serve --index FILE``, ``manifest --index FILE``,
:class:`~skills_core.server.filesystem.FilesystemSource` ``index=``) that remembers, for each
published file, its size, its digest and its **stat signature** ``(device, inode, size,
mtime_ns, ctime_ns)``, and for each ``SKILL.md`` digest what the frontmatter parser made of it.
On the next start a file whose signature is unchanged is neither read nor hashed, and a
``SKILL.md`` whose digest is known is not parsed (its frontmatter is still validated, so the
catalog's rules are applied afresh). This module turns that record into bytes and back; the
filesystem source does the I/O (reading with no link followed and no special file opened, and
writing atomically).

**When a signature may be trusted** (git's "racy git" problem, Documentation/technical/racy-git
in git). Timestamps are coarse (2 s on FAT, 1 s on some network and older filesystems): a file
rewritten with the same size within the same tick as it was hashed keeps its signature. So a
signature is only recorded when the file's ``mtime`` and ``ctime`` were both older than the start
of the walk that hashed it by more than the coarsest granularity (3 s); a younger, "racily
clean" file is not written to the index at all (git instead writes its size as 0, which never
matches: the same effect), and is hashed again on the next start. Any later change to a file
moves its ``ctime`` (which programs cannot set back) past the recorded one, so the signature
stops matching. A file renamed over another has another inode; a file hard-linked has the same
bytes.

**Never trusted blindly.** An index is used only when every check passes; anything else makes it
*absent* (the source starts cold, and writes a new index after its scan):

* it must start with the magic line ``skills-core digest index <version>``, and the version be
  :data:`FORMAT_VERSION` (an older or newer format is not read);
* a SHA-256 of the body must match the one recorded in the second line (a truncated, partly
  written or altered file fails here);
* the body must be the JSON described below, every value of the expected type;
* per root, the section is used only when the root's resolved path, its device and inode, and
  the name under which it is published (a root that is itself a skill) are the same: an index
  written for another root, or for a folder since replaced, contributes nothing;
* the parsed frontmatter is reused only when the index was written by the same version of
  skills_core (another parser could read a file differently); the digests are reused either way.

**Folders.** Alongside files, the index records each folder the walk listed: its signature and
its listing (every name in it with its kind: folder, regular file, link, other). A folder's
``mtime`` and ``ctime`` move whenever a name in it is created, removed or renamed (POSIX), so a
folder whose signature is unchanged holds the names it held: a warm walk neither opens nor lists
it, and looks only at the signature of each file in it (git's "untracked cache" rests on the same
rule). The racy rule applies to folders as to files. A folder is always judged by its own
signature: a change deep in a tree moves only the folders it touches.

The index is an optimisation the operator controls, like the server's own files: keep it where
only the server's user can write (it is created with mode 0600), and outside the served roots. A
file it lists whose signature changed is hashed again, and what is served is always read from disk
at the time of each ``resources/read``, through descriptors that follow no link. The names of a
listing are checked to be single path components (never empty, ``.`` or ``..``, never holding
``/`` or NUL) before anything is trusted.

Format (version 2)
------------------
The file is ASCII: three parts, the first two ending with a line feed::

    skills-core digest index 2
    sha256:<64 lowercase hex digits: the SHA-256 of the body>
    <body: one JSON object, ASCII only (non-ASCII characters and undecodable names escaped)>

The body::

    {"library": "<skills_core version that wrote it>",
     "roots": [{"path": "<resolved absolute path>", "device": <int>, "inode": <int>,
                "mount": "<name the root is published under, or empty>",
                "files": [["<path below the root>", <device>, <inode>, <size>, <mtime_ns>,
                           <ctime_ns>, "sha256:<hex>"], ...],
                "folders": [["<path below the root, empty for the root>", <device>, <inode>,
                             <size>, <mtime_ns>, <ctime_ns>, ["<kind><name>", ...]], ...]},
               ...],
     "frontmatter": {"sha256:<hex of a SKILL.md>": <its frontmatter object> | "<why it has none>",
                     ...}}

File paths are ``/``-separated names as the filesystem spells them (a name that is not UTF-8 is
kept as Python's ``surrogateescape`` form, escaped in the JSON), the published name of a mounted
root included. A listing item is one character of :class:`EntryKind` and the name, in the order
the filesystem listed them (which a walk reproduces). Rows are sorted by path, so the same tree
gives the same bytes. Version 1 (files and frontmatter only) is not read: it is rebuilt.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, final

from skills_core.errors import SkillsError
from skills_core.server._rules import ParsedSkillMd, SkillRecord
from skills_core.server.paths import DEFAULT_SCHEME
from skills_core.spec import MAX_RESOURCES, MAX_TOTAL_BYTES
from skills_core.validation import Finding, Severity

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "Signature",
    "FileRecord",
    "Listing",
    "EntryKind",
    "IndexProblem",
    "DigestIndexError",
    "RootIndex",
    "DigestIndex",
    "encode_index",
    "decode_index",
]

#: The format this module reads and writes; any other is treated as absent.
FORMAT_VERSION: Final = 2
#: The first line of an index, before the version number.
MAGIC: Final = b"skills-core digest index "

#: A file's or folder's stat signature: ``[st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns]``
#: (a list, as JSON gives it back).
Signature = list[int]
#: A file's signature and digest.
FileRecord = tuple[Signature, str]
#: A folder's signature and its listing: each name with its kind (one character) before it.
Listing = tuple[Signature, tuple[str, ...]]


class EntryKind(enum.StrEnum):
    """What a name in a folder's listing is (the first character of a listing item)."""

    #: A folder (not a link to one).
    FOLDER = "d"
    #: A regular file.
    FILE = "f"
    #: A symbolic link, to anything.
    LINK = "l"
    #: Anything else: a FIFO, a socket, a device.
    OTHER = "o"


_DIGEST_RE: Final = re.compile(r"sha256:[0-9a-f]{64}")
_DIGESTS_RE: Final = re.compile(r"(?:sha256:[0-9a-f]{64})*")
_DIGEST_LENGTH: Final = len("sha256:") + 64
_CHECKSUM_RE: Final = re.compile(rb"sha256:([0-9a-f]{64})\n")
#: Listing items joined by NUL: a kind, then a name that is not "." or "..".
_LISTING_RE: Final = re.compile(
    r"[dflo](?!\.\.?(?:\0|\Z))[^/\0]+(?:\0[dflo](?!\.\.?(?:\0|\Z))[^/\0]+)*"
)


class IndexProblem(enum.StrEnum):
    """Why an index is treated as absent."""

    #: The file does not start with the magic line.
    NOT_AN_INDEX = "not-an-index"
    #: Another format version (an older or a newer skills_core wrote it).
    VERSION = "version"
    #: The body does not match its recorded SHA-256 (truncated, partly written, altered).
    CHECKSUM = "checksum"
    #: The body is not the JSON this format describes.
    MALFORMED = "malformed"


class DigestIndexError(SkillsError, ValueError):
    """An index that cannot be used.

    Attributes:
        kind: An :class:`IndexProblem`.
        reason: What is wrong with it, as the end of a sentence about the index.
    """

    def __init__(self, kind: IndexProblem, reason: str) -> None:
        super().__init__(f"digest index {reason}", kind=kind)
        self.reason = reason


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RootIndex:
    """What the index holds for one root.

    Attributes:
        path: The root's resolved absolute path.
        device: ``st_dev`` of the root folder.
        inode: ``st_ino`` of the root folder.
        mount: The name the root is published under when it is itself a skill folder, else ``""``.
        files: ``{path below the root: (signature, digest)}``.
        folders: ``{folder path below the root: (signature, listing)}``: what the folder held
            when it had that signature, each name preceded by its kind (:class:`EntryKind`), in
            the order the filesystem listed them.
        skills: ``{skill folder: record}``: each published skill, with what it is made of.
    """

    path: str
    device: int
    inode: int
    mount: str = ""
    files: Mapping[str, FileRecord] = field(default_factory=lambda: MappingProxyType({}))
    folders: Mapping[str, Listing] = field(default_factory=lambda: MappingProxyType({}))
    skills: Mapping[str, SkillRecord] = field(default_factory=lambda: MappingProxyType({}))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DigestIndex:
    """The whole index.

    Attributes:
        library: The skills_core version that wrote it.
        scheme: The URI scheme of the skills its records describe.
        limits: ``(max_resources, max_total_bytes)`` of the catalog its records describe.
        roots: One section per root.
        frontmatter: ``{SKILL.md digest: parsed frontmatter object, or why it has none}``.
    """

    library: str
    scheme: str = DEFAULT_SCHEME
    limits: tuple[int, int] = (MAX_RESOURCES, MAX_TOTAL_BYTES)
    roots: tuple[RootIndex, ...] = ()
    frontmatter: Mapping[str, ParsedSkillMd] = field(default_factory=lambda: MappingProxyType({}))


def encode_index(index: DigestIndex) -> bytes:
    """The bytes of ``index`` in the current format (see the module docstring).

    Raises:
        ValueError: an encoded entry holds a line feed (JSON text never does).
    """
    encoded: list[bytes] = []
    body = {
        "library": index.library,
        "scheme": index.scheme,
        "limits": list(index.limits),
        "roots": [
            {
                "path": root.path,
                "device": root.device,
                "inode": root.inode,
                "mount": root.mount,
                "files": {
                    path: [signature, digest]
                    for path, (signature, digest) in sorted(root.files.items())
                },
                "folders": {
                    path: [signature, listing]
                    for path, (signature, listing) in sorted(root.folders.items())
                },
                "skills": _skill_rows(root.skills, encoded),
            }
            for root in index.roots
        ],
        "frontmatter": dict(sorted(index.frontmatter.items())),
    }
    data = json.dumps(body, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()
    data += b"".join([b"\n" + entry for entry in encoded])
    checksum = hashlib.sha256(data).hexdigest()
    return b"%s%d\nsha256:%s\n%s" % (MAGIC, FORMAT_VERSION, checksum.encode(), data)


def decode_index(data: bytes) -> DigestIndex:
    """Read an index written by :func:`encode_index`.

    Raises:
        DigestIndexError: the bytes are not an index of this format, do not match their checksum,
            or do not hold what the format says (``kind`` says which).
    """
    if not data.startswith(MAGIC):
        raise DigestIndexError(IndexProblem.NOT_AN_INDEX, "does not start with the magic line")
    line_end = data.find(b"\n", len(MAGIC))
    version = data[len(MAGIC) : line_end] if line_end != -1 else b""
    if version != b"%d" % FORMAT_VERSION:
        raise DigestIndexError(
            IndexProblem.VERSION,
            f"has format {version[:20].decode('ascii', 'replace')!r}; "
            f"this version of skills_core reads format {FORMAT_VERSION}",
        )
    match = _CHECKSUM_RE.match(data, line_end + 1)
    if match is None:
        raise DigestIndexError(IndexProblem.CHECKSUM, "has no checksum line")
    if hashlib.sha256(memoryview(data)[match.end() :]).hexdigest().encode() != match.group(1):
        raise DigestIndexError(
            IndexProblem.CHECKSUM, "does not match its checksum (truncated or altered)"
        )
    lines = data.split(b"\n")  # the magic, the checksum, the JSON, then the encoded entries
    try:
        document = json.loads(lines[2], parse_constant=_refuse_constant)
        return _index(document, lines, 3)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise DigestIndexError(IndexProblem.MALFORMED, f"is malformed ({exc})") from None


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _index(document: object, lines: list[bytes], first_entry: int) -> DigestIndex:
    """Check the decoded body field by field; TypeError or ValueError when anything is off.

    ``lines[first_entry:]`` are the encoded entries, one per skill record.
    """
    if type(document) is not dict:
        raise TypeError("the body is not an object")
    library = document["library"]
    scheme = document["scheme"]
    limits = document["limits"]
    roots = document["roots"]
    frontmatter = document["frontmatter"]
    if (
        type(library) is not str
        or type(scheme) is not str
        or type(limits) is not list
        or len(limits) != 2
        or not all(type(limit) is int for limit in limits)
        or type(roots) is not list
        or type(frontmatter) is not dict
    ):
        raise TypeError("library, scheme, limits, roots or frontmatter has the wrong type")
    for digest, parsed in frontmatter.items():
        if _DIGEST_RE.fullmatch(digest) is None or type(parsed) not in (dict, str):
            raise TypeError(
                f"frontmatter entry {digest[:80]!r} is not a digest and an object or string"
            )
    entries = itertools.islice(lines, first_entry, None)
    sections = tuple(_root(root, entries) for root in roots)
    if next(entries, None) is not None:
        raise ValueError("more encoded entries than skill records")
    return DigestIndex(
        library=library,
        scheme=scheme,
        limits=(limits[0], limits[1]),
        roots=sections,
        frontmatter=frontmatter,
    )


def _root(section: object, entries: Iterator[bytes]) -> RootIndex:
    if type(section) is not dict:
        raise TypeError("a root section is not an object")
    path, device, inode, mount, rows, folders, skills = (
        section["path"],
        section["device"],
        section["inode"],
        section["mount"],
        section["files"],
        section["folders"],
        section["skills"],
    )
    if (
        type(path) is not str
        or type(device) is not int
        or type(inode) is not int
        or type(mount) is not str
        or type(rows) is not dict
        or type(folders) is not dict
        or type(skills) is not dict
    ):
        raise TypeError("a root section has a field of the wrong type")
    return RootIndex(
        path=path,
        device=device,
        inode=inode,
        mount=mount,
        files=_files(rows),
        folders=_folders(folders),
        skills=_skills(skills, entries),
    )


def _files(rows: dict[str, Any]) -> dict[str, FileRecord]:
    # A signature is only compared with one made from a stat result: any other value never
    # equals it, so it needs only to be a list. The digests are checked all at once.
    files = {path: (signature, digest) for path, (signature, digest) in rows.items()}
    digests = "".join([digest for _, digest in files.values()])
    if (
        _DIGESTS_RE.fullmatch(digests) is None
        or len(digests) != _DIGEST_LENGTH * len(files)
        or not all(type(signature) is list for signature, _ in files.values())
    ):
        raise ValueError("a file row is not a signature and a digest")
    return files


def _folders(rows: dict[str, Any]) -> dict[str, Listing]:
    folders = {path: (signature, tuple(items)) for path, (signature, items) in rows.items()}
    # Every name is one path component: never empty, ".", "..", or holding "/" or NUL (the
    # walk joins it to the folder's path and may open it). Checked all at once: joined by NUL,
    # which no name holds (the count proves it).
    items = [item for _, listing in folders.values() for item in listing]
    joined = "\0".join(items)
    if (
        (items and _LISTING_RE.fullmatch(joined) is None)
        or joined.count("\0") != max(len(items) - 1, 0)
        or not all(type(signature) is list for signature, _ in folders.values())
    ):
        raise ValueError("a folder row is not a signature and a listing of names")
    return folders


def _skill_rows(skills: Mapping[str, SkillRecord], encoded: list[bytes]) -> dict[str, object]:
    """The JSON rows of ``skills``, by folder; their encoded entries appended to ``encoded``."""
    rows: dict[str, object] = {}
    for folder, record in sorted(skills.items()):
        if b"\n" in record.encoded_entry:
            raise ValueError(f"the encoded entry of {folder!r} holds a line feed")
        rows[folder] = [record.key, [_finding_row(f) for f in record.findings]]
        encoded.append(record.encoded_entry)
    return rows


def _finding_row(finding: Finding) -> list[object]:
    return [
        str(finding.severity),
        finding.field,
        finding.code,
        finding.message,
        finding.line,
        finding.column,
        finding.file,
    ]


def _skills(rows: dict[str, Any], entries: Iterator[bytes]) -> dict[str, SkillRecord]:
    # A key is only ever compared with the key of a skill as a walk found it, and used once
    # equal to it: what it holds needs no check here.
    skills: dict[str, SkillRecord] = {}
    new = tuple.__new__
    for (folder, (key, findings)), encoded in zip(rows.items(), entries, strict=False):
        if type(key) is not list or type(findings) is not list:
            raise TypeError(f"the skill row for {folder[:80]!r} has the wrong shape")
        if not encoded.startswith(b'{"uri": '):
            raise ValueError(f"the encoded entry of {folder[:80]!r} is not an entry")
        skills[folder] = new(
            SkillRecord, (key, encoded, tuple(map(_finding, findings)) if findings else ())
        )
    if len(skills) != len(rows):
        raise ValueError("fewer encoded entries than skill records")
    return skills


def _finding(row: object) -> Finding:
    if type(row) is not list:
        raise TypeError("a finding is not a list")
    severity, pointer, code, message, line, column, file = row
    if (
        type(pointer) is not str
        or type(code) is not str
        or type(message) is not str
        or type(line) not in (int, type(None))
        or type(column) not in (int, type(None))
        or type(file) not in (str, type(None))
    ):
        raise TypeError(f"the finding {str(code)[:80]!r} has a value of the wrong type")
    return Finding(
        severity=Severity(severity),
        field=pointer,
        code=code,
        message=message,
        line=line,
        column=column,
        file=file,
    )
