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
matches: the same effect), and is hashed again on the next start. A later ``write``,
``truncate``, ``chmod`` or rename moves the file's ``ctime`` (which programs cannot set back)
past the recorded one, or gives it another inode, so the signature stops matching. A file
hard-linked has the same bytes.

**What the index cannot see.** A write that moves neither time and keeps the size: through a
shared writable mapping (``mmap``), only the first write to a page since it was mapped or last
saved to disk moves the times, and later writes through the same mapping move nothing (on
``tmpfs`` a page is never saved: nothing after the first write). The index then keeps the old
digest, a warm
start publishes it while ``resources/read`` serves the new bytes, and hosts refuse the file until
its signature changes (``touch`` it) or a start without the index (delete the file) hashes it.

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
  skills_core (another parser could read a file differently); the digests are reused either way;
* before any of that, the file must belong to the user running the server and be writable by
  neither its group nor others (as ssh requires of its keys; see
  :mod:`skills_core.server.index_file`): an index that someone else could have written could say
  anything, checksum included. A file of another user's at the index's path is also never
  replaced.

**Folders.** Alongside files, the index records each folder the walk listed: its signature and
its listing (every name in it with its kind: folder, regular file, link, other). A folder's
``mtime`` and ``ctime`` move whenever a name in it is created, removed or renamed (POSIX), so a
folder whose signature is unchanged holds the names it held: a warm walk neither opens nor lists
it, and looks only at the signature of each file in it (git's "untracked cache" rests on the same
rule). The racy rule applies to folders as to files. A folder is always judged by its own
signature: a change deep in a tree moves only the folders it touches.

The index is an optimisation the operator controls, like the server's own files: keep it where
only the server's user can write (it is created with mode 0600, and refused otherwise), and
outside the served roots. A
file it lists whose signature changed is hashed again, and what is served is always read from disk
at the time of each ``resources/read``, through descriptors that follow no link. The names of a
listing are checked to be single path components (never empty, ``.`` or ``..``, never holding
``/`` or NUL) before anything is trusted.

Format (version 4)
------------------
The file is made of three parts::

    skills-core digest index 4
    sha256:<64 lowercase hex digits: the SHA-256 of everything after this line>
    <the body, compressed with zlib (RFC 1950), at most MAX_BODY_BYTES once decompressed>

and the body, once decompressed, of two::

    <the header: one line of ASCII JSON>
    <the columns: binary, one after the other, as long as the header says>

The header::

    {"library": "<skills_core version that wrote it>",
     "scheme": "<URI scheme of the records>", "limits": [<max resources>, <max total bytes>],
     "frontmatter": {"sha256:<hex of a SKILL.md>": <its frontmatter object> | "<why it has none>",
                     ...},
     "roots": [{"path": "<resolved absolute path>", "device": <int>, "inode": <int>,
                "mount": "<name the root is published under, or empty>",
                "folders": <count of folder records>,
                "skills": <count of skill records>, "keys": <count of files in their keys>,
                "findings": {"<skill folder>": [[<severity>, <field>, <code>, <message>,
                                                  <line>, <column>, <file>], ...], ...}},
               ...],
     "columns": [<length in bytes of each column>, ...]}

Each root has eight columns, in this order (names are UTF-8, those that are not UTF-8 on disk as
Python's ``surrogateescape`` writes them, and joined by NUL, which no name holds; integers are
little-endian; a digest is its 32 bytes):

1. the paths of the folders that have a record, below the root (``""`` for the root folder);
2. per folder, the length of its record: ``<I``;
3. the folder records, one after the other (below);
4. the folders of the skill records;
5. per skill record, how many files its key holds: ``<I``;
6. the paths, below the skill folder, of the files of every key;
7. per file of a key, its size and digest: ``<Q32s``;
8. per skill record, its encoded entry (UTF-8 JSON text, which holds no NUL).

A *folder record* (:func:`pack_folder`) is everything the index knows of one folder, in one
piece: the folder's signature ``<QQQqq`` (device, inode, size, mtime, ctime; all zero when its
listing is not recorded), then ``<II``: how many of its files have a row, and how many items its
listing holds (:data:`NO_LISTING` when it is not recorded); then the row of each of those files,
its signature and digest (``<QQQqq32s``, 72 bytes); then, joined by NUL, the names of those files
and the listing items: a kind (one character: ``d`` a folder, not a link to one; ``f`` a regular
file; ``l`` a symbolic link, to anything; ``o`` anything else, a FIFO, a socket, a device) and a
name, in the order the filesystem listed them (which a walk reproduces).

Everything is sorted by path, so the same tree gives the same bytes. A decoded index keeps each
folder record as it is, one bytes object per folder (:attr:`RootIndex.records`; :attr:`RootIndex.files`
and :attr:`RootIndex.folders` are views of them): the form a filesystem source keeps its caches in,
so a warm start of 100,000 skills makes no object per file, and a serving process keeps one per
folder. Every record is checked when the index is read (its counts against its length and its
names, no listing without a signature), and the names all at once with two regular expressions
(every file name one path component; every listing item a kind and a name that is not ``.`` or
``..``), so a warm start spends its time on the tree rather than on the index. A frontmatter is
kept once: for a SKILL.md whose skill has a record, in the record's encoded entry; the map in the
header holds the others (skills left out, and skills that met a problem). The body is compressed
(zlib's fastest level: a third of its size, read back in C at hundreds of megabytes a second); the
checksum covers the compressed bytes, so nothing is decompressed before it matches. Versions 1 (JSON
only, no folders or records), 2 (a file and folder column each, not compressed) and 3 (version 2,
compressed) are not read: the index is rebuilt.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, final

from ..errors import SkillsError
from ..spec import MAX_RESOURCES, MAX_TOTAL_BYTES
from ..validation import Finding, Severity
from ._rules import PackedKey, ParsedSkillMd, SkillRecord
from .paths import DEFAULT_SCHEME

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "Signature",
    "FileRecord",
    "Listing",
    "IndexProblem",
    "DigestIndexError",
    "RootIndex",
    "DigestIndex",
    "NO_LISTING",
    "RecordFiles",
    "RecordFolders",
    "SIGNATURE_ROW",
    "pack_file",
    "pack_folder",
    "unpack_folder",
    "encode_index",
    "decode_index",
]

#: The format this module reads and writes; any other is treated as absent.
FORMAT_VERSION: Final = 4
#: A body larger than this once decompressed is not read (a bound on what a small file can make).
MAX_BODY_BYTES: Final = 1 << 30
#: zlib's fastest level: the index is written after every scan that changed something.
_LEVEL: Final = 1
#: The first line of an index, before the version number.
MAGIC: Final = b"skills-core digest index "

#: A file's or folder's stat signature: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``.
Signature = tuple[int, int, int, int, int]
#: A file's signature and digest.
FileRecord = tuple[Signature, str]
#: A folder's signature and its listing: each name with its kind (one character) before it.
Listing = tuple[Signature, tuple[str, ...]]


_DIGEST_RE: Final = re.compile(r"sha256:[0-9a-f]{64}")
#: A file's row: its signature (device, inode and size unsigned, the times signed) and digest.
_FILE_ROW: Final = struct.Struct("<QQQqq32s")
#: The signature at the start of a file's row.
SIGNATURE_ROW: Final = struct.Struct("<QQQqq")
#: A folder's row: its signature and how many items of the listing column are its.
_FOLDER_ROW: Final = struct.Struct("<QQQqqI")
#: A file of a skill record's key: its size and digest (its path is in another column).
_KEY_ROW: Final = struct.Struct("<Q32s")
#: How many files a skill record's key holds.
_COUNT: Final = struct.Struct("<I")
#: Columns per root (see the module docstring).
_COLUMNS: Final = 8
#: After a folder record's signature: how many file rows and how many listing items it holds.
_RECORD_COUNTS: Final = struct.Struct("<II")
#: The length of a folder record's head (signature and counts).
_RECORD_HEAD: Final = SIGNATURE_ROW.size + _RECORD_COUNTS.size
#: The count of listing items of a folder whose listing is not recorded.
NO_LISTING: Final = 0xFFFF_FFFF
#: The signature of a folder record without a listing.
_NO_SIGNATURE: Final = bytes(SIGNATURE_ROW.size)
#: The length of each folder record.
_LENGTH: Final = struct.Struct("<I")
_CHECKSUM_RE: Final = re.compile(rb"sha256:([0-9a-f]{64})\n")
#: Listing items joined by NUL: a kind, then a name that is not "." or "..".
_LISTING_RE: Final = re.compile(
    rb"[dflo](?!\.\.?(?:\0|\Z))[^/\0]+(?:\0[dflo](?!\.\.?(?:\0|\Z))[^/\0]+)*"
)
#: File names joined by NUL: never empty, never holding "/".
_FILE_NAMES_RE: Final = re.compile(rb"[^/\0]+(?:\0[^/\0]+)*")


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


def pack_file(signature: Signature, digest: str) -> bytes | None:
    """A file's row (see the module docstring: its signature and raw digest, 72 bytes), or None
    when its numbers do not fit the format's integers."""
    return _pack(_FILE_ROW, *signature, bytes.fromhex(digest[7:]))


def pack_folder(
    signature: bytes | None, listing: Sequence[str] | None, rows: Mapping[str, bytes]
) -> bytes:
    """A folder's record (see the module docstring): its packed signature and listing (both
    None when its listing is not recorded) and ``{file name: row}`` of its files cached.

    Raises:
        ValueError: a name holds a NUL (file names never do).
    """
    names = list(rows) if listing is None else [*rows, *listing]
    joined = "\0".join(names)
    if joined.count("\0") != max(len(names) - 1, 0):
        raise ValueError("a name holds a NUL")
    return b"".join(
        [
            _NO_SIGNATURE if signature is None else signature,
            _RECORD_COUNTS.pack(len(rows), NO_LISTING if listing is None else len(listing)),
            *rows.values(),
            joined.encode("utf-8", "surrogateescape"),
        ]
    )


def unpack_folder(record: bytes) -> tuple[bytes | None, list[str] | None, dict[str, bytes]]:
    """``(signature, listing, {file name: row})`` of a folder's record (:func:`pack_folder`);
    the signature and listing are None when the listing is not recorded."""
    count, items = _RECORD_COUNTS.unpack_from(record, SIGNATURE_ROW.size)
    end = _RECORD_HEAD + _FILE_ROW.size * count
    text = record[end:]
    names = text.decode("utf-8", "surrogateescape").split("\0") if text else []
    rows = dict(
        zip(
            names[:count],
            [record[start : start + _FILE_ROW.size] for start in range(_RECORD_HEAD, end, 72)],
            strict=True,
        )
    )
    if items == NO_LISTING:
        return None, None, rows
    return record[: SIGNATURE_ROW.size], names[count:], rows


@final
class RecordFiles(Mapping[str, FileRecord]):
    """``{path: (signature, digest)}`` of every file in a root's folder records (a view: a
    lookup unpacks its folder's record)."""

    __slots__ = ("records",)

    def __init__(self, records: Mapping[str, bytes]) -> None:
        """View the files of ``{folder path: record}``."""
        self.records = records

    def __getitem__(self, path: str) -> FileRecord:
        folder, _, name = path.rpartition("/")
        dev, ino, size, mtime, ctime, digest = _FILE_ROW.unpack(
            unpack_folder(self.records[folder])[2][name]
        )
        return (dev, ino, size, mtime, ctime), "sha256:" + digest.hex()

    def __iter__(self) -> Iterator[str]:
        for folder, record in self.records.items():
            for name in unpack_folder(record)[2]:
                yield f"{folder}/{name}" if folder else name

    def __len__(self) -> int:
        return sum(
            _RECORD_COUNTS.unpack_from(record, SIGNATURE_ROW.size)[0]
            for record in self.records.values()
        )

    def __repr__(self) -> str:
        return f"RecordFiles({dict(self)!r})"


@final
class RecordFolders(Mapping[str, Listing]):
    """``{folder path: (signature, listing)}`` of the folders of a root's folder records whose
    listing is recorded (a view: a lookup unpacks the record)."""

    __slots__ = ("records",)

    def __init__(self, records: Mapping[str, bytes]) -> None:
        """View the listings of ``{folder path: record}``."""
        self.records = records

    def __getitem__(self, path: str) -> Listing:
        signature, listing, _ = unpack_folder(self.records[path])
        if signature is None or listing is None:
            raise KeyError(path)
        dev, ino, size, mtime, ctime = SIGNATURE_ROW.unpack(signature)
        return (dev, ino, size, mtime, ctime), tuple(listing)

    def __iter__(self) -> Iterator[str]:
        for folder, record in self.records.items():
            if _RECORD_COUNTS.unpack_from(record, SIGNATURE_ROW.size)[1] != NO_LISTING:
                yield folder

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"RecordFolders({dict(self)!r})"


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
            when it had that signature, each name preceded by its kind (``d``, ``f``, ``l`` or
            ``o``; see the module docstring), in the order the filesystem listed them.
        skills: ``{skill folder: record}``: each published skill, with what it is made of.
        records: ``{folder path: record}`` (:func:`pack_folder`): the files and folders above
            as the index stores them and a filesystem source keeps them. When given,
            :attr:`files` and :attr:`folders` are views of it (:class:`RecordFiles`,
            :class:`RecordFolders`); a decoded index gives it.
    """

    path: str
    device: int
    inode: int
    mount: str = ""
    files: Mapping[str, FileRecord] = field(default_factory=lambda: MappingProxyType({}))
    folders: Mapping[str, Listing] = field(default_factory=lambda: MappingProxyType({}))
    skills: Mapping[str, SkillRecord] = field(default_factory=lambda: MappingProxyType({}))
    records: Mapping[str, bytes] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        records = self.records
        if records is not None:
            object.__setattr__(self, "files", RecordFiles(records))
            object.__setattr__(self, "folders", RecordFolders(records))


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

    A file, folder or record whose numbers do not fit the format's integers (a size or an inode
    past 2**64, a time past the year 2262) is left out: it is looked at afresh next time.

    Raises:
        ValueError: an encoded entry or a name holds a NUL (JSON text and file names never do).
    """
    columns: list[bytes] = []
    sections = [_encode_root(root, columns) for root in index.roots]
    header = {
        "library": index.library,
        "scheme": index.scheme,
        "limits": list(index.limits),
        "frontmatter": dict(sorted(index.frontmatter.items())),
        "roots": sections,
        "columns": [len(column) for column in columns],
    }
    data = json.dumps(header, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()
    data = zlib.compress(b"".join([data, b"\n", *columns]), _LEVEL)
    checksum = hashlib.sha256(data).hexdigest()
    return b"%s%d\nsha256:%s\n%s" % (MAGIC, FORMAT_VERSION, checksum.encode(), data)


def _records_of(root: RootIndex) -> dict[str, bytes]:
    """The folder records of a root: its own, or made of its ``files`` and ``folders`` (a file
    or folder whose numbers do not fit the format's integers left out).

    Raises:
        ValueError: a name holds a NUL.
    """
    if root.records is not None:
        return dict(root.records)
    rows: dict[str, dict[str, bytes]] = {}
    for path, (signature, digest) in sorted(root.files.items()):
        row = pack_file(signature, digest)
        if row is not None:
            folder, _, name = path.rpartition("/")
            rows.setdefault(folder, {})[name] = row
    listings: dict[str, tuple[bytes, tuple[str, ...]]] = {}
    for path, (signature, listing) in root.folders.items():
        packed = _pack(SIGNATURE_ROW, *signature)
        if packed is not None:
            listings[path] = (packed, listing)
    records: dict[str, bytes] = {}
    for folder in rows.keys() | listings.keys():
        packed_signature, items = listings.get(folder, (None, None))
        records[folder] = pack_folder(packed_signature, items, rows.get(folder, {}))
    return records


def _encode_root(root: RootIndex, columns: list[bytes]) -> dict[str, object]:
    """The header of one root; its columns appended to ``columns`` (module docstring)."""
    records = sorted(_records_of(root).items())
    skills: list[tuple[str, SkillRecord]] = []
    key_paths: list[bytes] = []  # per record, its paths joined by NUL
    key_rows: list[bytes] = []
    keys = 0
    for folder, record in sorted(root.skills.items()):
        key = record.key
        if isinstance(key, PackedKey):  # as a builder keeps it: its rows and paths as they are
            (count,) = _COUNT.unpack_from(key.packed)
            end = _COUNT.size + _KEY_ROW.size * count
            skills.append((folder, record))
            if count:
                key_paths.append(key.packed[end:])
                key_rows.append(key.packed[_COUNT.size : end])
                keys += count
            continue
        rows = [
            _pack(_KEY_ROW, int(key[position + 1]), bytes.fromhex(str(key[position + 2])[7:]))
            for position in range(0, len(key), 3)
        ]
        packed = [row for row in rows if row is not None]
        if len(packed) != len(rows):
            continue  # a size past the format's integers: built again next time
        skills.append((folder, record))
        if packed:
            key_paths.append(_join([str(name) for name in key[::3]]))
            key_rows += packed
            keys += len(packed)
    entries = [record.encoded_entry for _, record in skills]
    if any(b"\0" in entry for entry in entries):
        raise ValueError("an encoded entry holds a NUL")
    columns += (
        _join([path for path, _ in records]),
        b"".join([_LENGTH.pack(len(record)) for _, record in records]),
        b"".join([record for _, record in records]),
        _join([folder for folder, _ in skills]),
        b"".join([_COUNT.pack(len(record.key) // 3) for _, record in skills]),
        b"\0".join(key_paths),
        b"".join(key_rows),
        b"\0".join(entries),
    )
    return {
        "path": root.path,
        "device": root.device,
        "inode": root.inode,
        "mount": root.mount,
        "folders": len(records),
        "skills": len(skills),
        "keys": keys,
        "findings": {
            folder: [_finding_row(f) for f in record.findings]
            for folder, record in skills
            if record.findings
        },
    }


def _pack(row: struct.Struct, *values: int | bytes) -> bytes | None:
    try:
        return row.pack(*values)
    except struct.error:
        return None


def _join(names: list[str]) -> bytes:
    joined = "\0".join(names)
    if joined.count("\0") != max(len(names) - 1, 0):
        raise ValueError("a name holds a NUL")
    return joined.encode("utf-8", "surrogateescape")


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
    body = memoryview(data)[match.end() :]
    if hashlib.sha256(body).hexdigest().encode() != match.group(1):
        raise DigestIndexError(
            IndexProblem.CHECKSUM, "does not match its checksum (truncated or altered)"
        )
    try:
        inflate = zlib.decompressobj()
        data = inflate.decompress(body, MAX_BODY_BYTES)
        if inflate.unconsumed_tail or not inflate.eof:
            raise ValueError("the body is larger than its bound, or cut short")
        header_end = data.index(b"\n")
        header = json.loads(data[:header_end], parse_constant=_refuse_constant)
        return _index(header, memoryview(data)[header_end + 1 :])
    except (ValueError, TypeError, LookupError, RecursionError, struct.error, zlib.error) as exc:
        raise DigestIndexError(IndexProblem.MALFORMED, f"is malformed ({exc})") from None


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _index(header: object, data: memoryview) -> DigestIndex:
    """Check the header field by field and read the columns; TypeError or ValueError (or
    struct.error) when anything is off."""
    if type(header) is not dict:
        raise TypeError("the header is not an object")
    library = header["library"]
    scheme = header["scheme"]
    limits = header["limits"]
    roots = header["roots"]
    frontmatter = header["frontmatter"]
    lengths = header["columns"]
    if (
        type(library) is not str
        or type(scheme) is not str
        or type(limits) is not list
        or len(limits) != 2
        or not all(type(limit) is int for limit in limits)
        or type(roots) is not list
        or type(frontmatter) is not dict
        or type(lengths) is not list
        or not all(type(length) is int and length >= 0 for length in lengths)
        or sum(lengths) != len(data)
        or len(lengths) != _COLUMNS * len(roots)
    ):
        raise TypeError("the header has a field of the wrong type or length")
    for digest, parsed in frontmatter.items():
        if _DIGEST_RE.fullmatch(digest) is None or type(parsed) not in (dict, str):
            raise TypeError(
                f"frontmatter entry {digest[:80]!r} is not a digest and an object or string"
            )
    columns: list[memoryview] = []
    start = 0
    for length in lengths:
        columns.append(data[start : start + length])
        start += length
    return DigestIndex(
        library=library,
        scheme=scheme,
        limits=(limits[0], limits[1]),
        roots=tuple(
            _decode_root(root, columns[number * _COLUMNS : (number + 1) * _COLUMNS])
            for number, root in enumerate(roots)
        ),
        frontmatter=frontmatter,
    )


def _decode_root(section: object, columns: list[memoryview]) -> RootIndex:
    if type(section) is not dict:
        raise TypeError("a root section is not an object")
    path, device, inode, mount, findings = (
        section["path"],
        section["device"],
        section["inode"],
        section["mount"],
        section["findings"],
    )
    counts = [section[name] for name in ("folders", "skills", "keys")]
    if (
        type(path) is not str
        or type(device) is not int
        or type(inode) is not int
        or type(mount) is not str
        or type(findings) is not dict
        or not all(type(count) is int for count in counts)
    ):
        raise TypeError("a root section has a field of the wrong type")
    folders, skills, keys = counts
    (
        folder_paths,
        record_lengths,
        records,
        skill_folders,
        key_counts,
        key_paths,
        key_rows,
        entries,
    ) = columns
    return RootIndex(
        path=path,
        device=device,
        inode=inode,
        mount=mount,
        records=_folders(
            _names(folder_paths, folders),
            [length for (length,) in _rows(_LENGTH, record_lengths, folders)],
            bytes(records),
        ),
        skills=_skills(
            _names(skill_folders, skills),
            [count for (count,) in _rows(_COUNT, key_counts, skills)],
            (_split(key_paths, keys), _whole(_KEY_ROW, key_rows, keys)),
            _split(entries, skills),
            findings,
        ),
    )


def _split(column: memoryview, count: int) -> list[bytes]:
    """The ``count`` NUL-separated items of ``column``."""
    items = bytes(column).split(b"\0") if count else []
    if len(items) != count or (not count and column):
        raise ValueError(f"a column does not hold {count} items")
    return items


def _names(column: memoryview, count: int) -> list[str]:
    """The ``count`` NUL-separated names of ``column`` (names that are not UTF-8 as Python's
    ``surrogateescape`` keeps them)."""
    names = str(column, "utf-8", "surrogateescape").split("\0") if count else []
    if len(names) != count or (not count and column):
        raise ValueError(f"a column does not hold {count} names")
    return names


def _whole(row: struct.Struct, column: memoryview, count: int) -> bytes:
    """The ``count`` rows of ``column``, as one bytes object."""
    if len(column) != row.size * count:
        raise ValueError(f"a column does not hold {count} rows")
    return bytes(column)


def _rows(row: struct.Struct, column: memoryview, count: int) -> list[tuple[Any, ...]]:
    if len(column) != row.size * count:
        raise ValueError(f"a column does not hold {count} rows")
    return list(row.iter_unpack(column))


def _folders(paths: list[str], lengths: list[int], data: bytes) -> dict[str, bytes]:
    """The folder records, each checked: its counts against its length and names, no listing
    without a signature, every file name one path component without NUL, every listing item a
    kind and a name that is not ``.`` or ``..`` (the walk joins it to the folder's path and
    may open it). The names are checked all at once."""
    if sum(lengths) != len(data):
        raise ValueError("the folder records do not fill their column")
    records: dict[str, bytes] = {}
    file_names: list[bytes] = []
    items: list[bytes] = []
    position = 0
    head = _RECORD_HEAD
    row = _FILE_ROW.size
    unpack_counts = _RECORD_COUNTS.unpack_from
    for path, length in zip(paths, lengths, strict=True):
        record = data[position : position + length]
        position += length
        if length < head:
            raise ValueError(f"the record of {path[:80]!r} is cut short")
        count, listed = unpack_counts(record, SIGNATURE_ROW.size)
        end = head + row * count
        if end > length:
            raise ValueError(f"the record of {path[:80]!r} does not hold its rows")
        text = record[end:]
        names = text.split(b"\0") if text else []
        if listed == NO_LISTING:
            if record[: SIGNATURE_ROW.size] != _NO_SIGNATURE or len(names) != count:
                raise ValueError(f"the record of {path[:80]!r} does not hold its names")
            file_names += names
        else:
            if len(names) != count + listed:
                raise ValueError(f"the record of {path[:80]!r} does not hold its names")
            file_names += names[:count]
            items += names[count:]
        records[path] = record
    if len(records) != len(paths):
        raise ValueError("a folder has two records")
    if file_names and _FILE_NAMES_RE.fullmatch(b"\0".join(file_names)) is None:
        raise ValueError("a folder record holds a file name that is not one path component")
    if items and _LISTING_RE.fullmatch(b"\0".join(items)) is None:
        raise ValueError("a folder listing holds a name that is not one path component")
    return records


def _skills(
    folders: list[str],
    counts: list[int],
    keys: tuple[list[bytes], bytes],
    entries: list[bytes],
    findings: dict[str, Any],
) -> dict[str, SkillRecord]:
    """The records: each folder's key (``count`` files of ``keys``, its paths and rows), its
    encoded entry and its findings (by folder, only for records that have any)."""
    paths, rows = keys
    skills: dict[str, SkillRecord] = {}
    position = 0
    size = _KEY_ROW.size
    pack_count = _COUNT.pack
    for folder, count, encoded in zip(folders, counts, entries, strict=True):
        if not encoded.startswith(b'{"uri": '):
            raise ValueError(f"the encoded entry of {folder[:80]!r} is not an entry")
        end = position + count
        if end > len(paths):
            raise ValueError("the skill keys do not hold every file")
        # Packed as a catalog builder keeps it: no object per file (_rules.PackedKey).
        key = PackedKey(
            b"".join(
                [
                    pack_count(count),
                    rows[position * size : end * size],
                    b"\0".join(paths[position:end]),
                ]
            )
        )
        position = end
        rows_of_findings = findings.get(folder, ())
        skills[folder] = SkillRecord(
            key, encoded, tuple(map(_finding, rows_of_findings)) if rows_of_findings else ()
        )
    if position != len(paths):
        raise ValueError("the skill keys do not hold every file")
    return skills


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
