"""The published catalog: what ``skills-core publish`` writes and replicas read (pure, no I/O).

Theory of operation
-------------------
A publish stores each file's bytes once, under its digest, and then one *catalog document* that
says what is published: the commit point. A replica reads the document, checks it by the rules a
folder is checked by (:mod:`skills_core.sources.store`), and reads files by digest. This module is
the document's format, and nothing else.

**The document** is one JSON object in a canonical encoding (keys sorted, no whitespace, UTF-8,
``ensure_ascii=False``) with two members, in this order::

    {"catalog":<body>,"checksum":"sha256:<64 hex digits>"}

where the checksum is the SHA-256 of the exact bytes of ``<body>`` (so a reader checks it by
slicing, without encoding anything again). The body::

    {"format": "skills-core/catalog",   the format's name
     "generation": 7,                   a whole number; each publish writes a greater one
     "omitted": [{"code", "path", "reason", "uri"}, ...],  what the publisher left out, and why
     "scheme": "skill",                 the URI scheme of every entry
     "skills": [{"entry": <entry>, "dirs": [...]}, ...],   sorted by entry URI
     "version": 1}                      the format's version; another one is refused

``entry`` is the skill's entry exactly as ``skills/list`` serves it (URI, frontmatter, and every
file as URI, digest and size); ``dirs`` (present only when not empty) lists the folders of the
skill that hold no file, ``/``-separated and relative to the skill, which directory reads list
too. A file's bytes are stored under its digest (``blobs/sha256/<hex>`` beside the document, in
an object store). Nothing in the document is trusted because it is there: the checksum catches a
document cut short or damaged; the body must be UTF-8 and strict JSON (no duplicate key,
``NaN`` or ``Infinity``, no lone surrogate); the rules catch everything else.

**Reading.** :func:`decode_document` parses a body in the canonical layout value by value with
the same strict parser (so it knows where each record's entry is: the checker keeps that text as
the skill's encoded entry, :mod:`skills_core.sources.store`), and any other layout whole; the
garbage collector is paused meanwhile (:func:`paused_gc`).

Two documents have the *same content* when their bodies are equal but for the generation
(:func:`same_content`): publishing an unchanged tree again then writes nothing.
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final, cast, final

from ..jsonvalue import loads_strict, strict_scanner
from ..server.catalog import Catalog
from ..spec import DIGEST_PREFIX

__all__ = [
    "CATALOG_FORMAT",
    "CATALOG_VERSION",
    "CatalogError",
    "CatalogDocument",
    "encode_document",
    "decode_document",
    "same_content",
    "blob_key",
    "document_from_catalog",
]

#: The ``format`` member of every catalog body.
CATALOG_FORMAT: Final = "skills-core/catalog"
#: The version of the format this library writes and reads.
CATALOG_VERSION: Final = 1
#: Largest document a reader accepts (a bound, not a tuning): 100,000 skills of about 2 KB.
MAX_DOCUMENT_BYTES: Final = 256 << 20

_PREFIX: Final = b'{"catalog":'
_SUFFIX_RE: Final = re.compile(rb',"checksum":"sha256:([0-9a-f]{64})"\}\Z')
_SUFFIX_BYTES: Final = len(b',"checksum":"sha256:') + 64 + len(b'"}')
#: What a ``\\uD800``-``\\uDFFF`` escape looks like; it is one when an even run of backslashes
#: stands before it (:func:`_has_surrogate_escape`).
_SURROGATE_ESCAPE_RE: Final = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class CatalogError(ValueError):
    """A catalog document that cannot be read: damaged, cut short, malformed, or another format.

    Attributes:
        message: One line for people.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogDocument:
    """A catalog document's content (see the module docstring).

    Attributes:
        generation: The publish's number; each publish writes a greater one.
        scheme: The URI scheme of every entry.
        skills: One record per published skill, sorted by entry URI: ``{"entry": ..., "dirs":
            [...]}`` as plain JSON (read-only by convention).
        omitted: What the publisher left out: ``{"path", "uri", "code", "reason"}`` each.
    """

    generation: int
    scheme: str
    skills: Sequence[Mapping[str, Any]] = ()
    omitted: Sequence[Mapping[str, Any]] = ()
    _body: bytes | None = field(default=None, repr=False, compare=False)
    #: Per record, its entry's JSON text exactly as the document holds it (None for a record
    #: whose text was not found in the canonical layout), or None for the whole document when
    #: it was not read in the canonical layout (see :func:`decode_document`).
    _entries: Sequence[str | None] | None = field(default=None, repr=False, compare=False)

    def body(self) -> dict[str, Any]:
        """The document's body as plain JSON."""
        return {
            "format": CATALOG_FORMAT,
            "generation": self.generation,
            "omitted": list(self.omitted),
            "scheme": self.scheme,
            "skills": list(self.skills),
            "version": CATALOG_VERSION,
        }


def _canonical(value: object) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
    ).encode()


def encode_document(document: CatalogDocument) -> bytes:
    """The document's bytes: canonical JSON with its checksum (see the module docstring).

    Raises:
        ValueError: a value is not JSON, or a string holds a lone surrogate.
    """
    body = _canonical(document.body())
    digest = hashlib.sha256(body).hexdigest()
    return _PREFIX + body + b',"checksum":"sha256:' + digest.encode() + b'"}'


def decode_document(data: bytes) -> CatalogDocument:
    """Read a catalog document, checking its checksum and its shape (not the rules).

    The body must be UTF-8 and strict JSON. A body in the canonical layout (what
    :func:`encode_document` writes) is read record by record by the same strict parser, which also
    gives each record's entry text (kept for the checker, see :class:`CatalogDocument`); any other
    layout is read whole. The garbage collector is paused meanwhile (the objects made all live
    until the check is done: a collection would only walk them).

    Raises:
        CatalogError: the bytes are not a whole, undamaged catalog document of this version.
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        raise CatalogError(f"the catalog is larger than {MAX_DOCUMENT_BYTES:,} bytes")
    match = _SUFFIX_RE.search(data, max(0, len(data) - _SUFFIX_BYTES))
    if not data.startswith(_PREFIX) or match is None:
        raise CatalogError("the catalog is not a catalog document (or was cut short)")
    body = data[len(_PREFIX) : match.start()]
    if hashlib.sha256(body).hexdigest() != match.group(1).decode():
        raise CatalogError("the catalog does not match its checksum (damaged or cut short)")
    if _has_surrogate_escape(body):
        raise CatalogError("the catalog is not in the canonical encoding (a surrogate escape)")
    try:
        text = body.decode("utf-8")  # strict: an encoded surrogate is not UTF-8
    except UnicodeDecodeError:
        raise CatalogError("the catalog's body is not UTF-8") from None
    with paused_gc():
        scanned = _scan_canonical(text)
        entries: list[str | None] | None = None
        decoded: object
        if scanned is not None:
            decoded, entries = scanned
        else:
            try:
                # Strict: a duplicate key, NaN or Infinity (which no answer could carry) is refused.
                decoded = loads_strict(text)
            except ValueError as exc:
                raise CatalogError(
                    f"the catalog's body is not strict JSON ({exc!s:.200})"
                ) from None
    if not isinstance(decoded, dict):
        raise CatalogError("the catalog's body is not an object")
    if decoded.get("format") != CATALOG_FORMAT:
        raise CatalogError(f"the catalog's format is not {CATALOG_FORMAT!r}")
    version = decoded.get("version")
    if version != CATALOG_VERSION or type(version) is not int:
        raise CatalogError(
            f"the catalog is of version {version!r}; this library reads version "
            f"{CATALOG_VERSION} (publish again with this version, or upgrade the replica)"
        )
    generation = decoded.get("generation")
    if type(generation) is not int or generation < 0:
        raise CatalogError("the catalog's generation is not a whole number")
    scheme = decoded.get("scheme")
    skills = decoded.get("skills")
    omitted = decoded.get("omitted", [])
    if not isinstance(scheme, str) or not isinstance(skills, list) or not isinstance(omitted, list):
        raise CatalogError("the catalog lacks its scheme, its skills or its omitted list")
    if not all(isinstance(record, dict) for record in skills) or not all(
        isinstance(item, dict) for item in omitted
    ):
        raise CatalogError("a record of the catalog is not an object")
    return CatalogDocument(
        generation=generation,
        scheme=scheme,
        skills=cast("list[dict[str, Any]]", skills),  # objects, as just checked
        omitted=cast("list[dict[str, Any]]", omitted),
        _body=body,
        _entries=entries,
    )


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the garbage collector for the block (unless it is paused already).

    A catalog's check makes a few objects per skill that all live until it ends (the decoded
    document) or as long as the catalog is served: a collection meanwhile walks them all again
    for nothing. Objects freed by their last reference are freed all the same.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _scan_canonical(text: str) -> tuple[dict[str, Any], list[str | None]] | None:
    """The body and each record's entry text, when ``text`` is in the canonical layout.

    The body's members and each record are parsed by the strict parser, one value at a time,
    between the separators the canonical encoding writes (no white space); each record's entry
    text is its last member's (``"entry"`` sorts after ``"dirs"``). None when the text is laid
    out any other way, or does not parse: the caller then parses it whole (and says why not).
    """
    scan = strict_scanner()  # one per call: a parser keeps a cache of keys while it parses
    body: dict[str, Any] = {}
    entries: list[str | None] = []
    end = len(text)
    if not text.startswith('{"'):
        return None
    try:
        index = 1
        while True:
            key, index = scan(text, index)  # a string: text[index] is '"'
            if type(key) is not str or text[index] != ":" or key in body:
                return None
            index += 1
            if key == "skills" and text.startswith("[", index):
                records, index = _scan_records(scan, text, index, entries)
                body[key] = records
            else:
                body[key], index = scan(text, index)
            separator = text[index]
            index += 1
            if separator == "}":
                break
            if separator != "," or text[index] != '"':
                return None
    except (ValueError, IndexError, StopIteration, RecursionError):
        return None
    if index != end or not isinstance(body.get("skills"), list):
        return None
    return body, entries


def _scan_records(
    scan: Callable[[str, int], tuple[Any, int]], text: str, index: int, entries: list[str | None]
) -> tuple[list[Any], int]:
    """The records of the ``skills`` list starting at ``text[index]`` (a ``[``), each record's
    entry text appended to ``entries``, and the index after the list (see
    :func:`_scan_canonical`; raises ValueError or IndexError as the parser does)."""
    records: list[Any] = []
    append_record = records.append
    append_entry = entries.append
    index += 1
    if text[index] == "]":
        return records, index + 1
    while True:
        start = index
        record, index = scan(text, index)
        append_record(record)
        entry: str | None = None
        if type(record) is dict and text[index - 2] == "}":
            if len(record) == 1 and text.startswith('{"entry":', start):
                entry = text[start + 9 : index - 1]
            elif len(record) == 2 and text.startswith('{"dirs":', start) and "entry" in record:
                after = scan(text, start + 8)[1]
                if text.startswith(',"entry":', after):
                    entry = text[after + 9 : index - 1]
        append_entry(entry)
        separator = text[index]
        index += 1
        if separator == "]":
            return records, index
        if separator != ",":
            raise ValueError("not the canonical layout")


def _has_surrogate_escape(body: bytes) -> bool:
    """Whether ``body`` holds a ``\\uD800``-``\\uDFFF`` escape: a canonical body never does (it
    writes every character as itself), and one alone would be a lone surrogate.

    The pattern has a literal start, so the search skips along the body; each candidate is an
    escape when the backslashes before it are an even run (each run is counted once).
    """
    for match in _SURROGATE_ESCAPE_RE.finditer(body):
        start = position = match.start()
        while position > 0 and body[position - 1] == 0x5C:  # "\\"
            position -= 1
        if (start - position) % 2 == 0:
            return True
    return False


def same_content(old: CatalogDocument, new: CatalogDocument) -> bool:
    """Whether two documents publish the same thing (equal but for the generation)."""
    return (
        old.scheme == new.scheme
        and list(old.skills) == list(new.skills)
        and list(old.omitted) == list(new.omitted)
    )


def blob_key(digest: str) -> str:
    """Where a file with ``digest`` is stored, relative to the catalog's prefix.

    Raises:
        ValueError: ``digest`` is not a ``sha256:`` digest.
    """
    if not digest.startswith(DIGEST_PREFIX) or len(digest) != len(DIGEST_PREFIX) + 64:
        raise ValueError(f"{digest!r} is not a sha256 digest")
    return "blobs/sha256/" + digest[len(DIGEST_PREFIX) :]


def document_from_catalog(
    catalog: Catalog,
    *,
    generation: int,
    scheme: str,
    dirs: Mapping[str, Sequence[str]] | None = None,
) -> CatalogDocument:
    """The document publishing ``catalog``'s skills (what ``serve`` would serve of it).

    Args:
        catalog: A source's catalog (every published skill becomes a record).
        generation: The publish's number.
        scheme: The URI scheme of its skills.
        dirs: ``{skill URI: folders of the skill that hold no file}``, for directory reads.
    """
    dirs = dirs or {}
    skills: list[dict[str, Any]] = []
    for skill in catalog.skills:
        record: dict[str, Any] = {"entry": skill.entry.to_json()}
        empty = sorted(dirs.get(skill.uri, ()))
        if empty:
            record["dirs"] = empty
        skills.append(record)
    omitted = [
        {"path": o.path, "uri": o.uri, "code": str(o.code), "reason": o.reason}
        for o in catalog.omitted
    ]
    return CatalogDocument(generation=generation, scheme=scheme, skills=skills, omitted=omitted)
