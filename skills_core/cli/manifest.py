"""``skills-core manifest``: the entries ``serve`` would publish, and why any are left out.

Theory of operation: one scan of the roots by the same source and catalog builder that ``serve``
uses (with the same ``--include-hidden``, ``--exclude`` and ``--index`` options), printed as text
or, with ``--json``, as one JSON document.

**Text** shows every name and message from the folders through
:func:`skills_core.display.display` after a fixed word of ours, so a file name holding a line
break, an escape sequence or a bidirectional override cannot forge or reorder a line.

**JSON** (``--json``) is one object with five lists: ``skills`` (the entries, as ``skills/list``
would send them), ``omitted`` (``path``, ``uri``, ``code``, ``reason``), ``warnings`` (``uri`` and
the finding), ``problems`` (``path``, ``code``, ``reason``: links, special files, unreadable
entries) and ``skipped`` (``path``, ``code``, ``reason``: hidden, excluded and always-ignored
entries, and ``looksSecret``). A file whose name looks like a secret
(:func:`skills_core.server.selection.looks_secret`) is a ``secret-file`` warning when it is
published, and is marked as such when it is skipped, in text and JSON alike.

The JSON is always strict UTF-8. A file or folder name that is not valid UTF-8 cannot be a
JSON string as it is: its ``path`` then shows each byte that is not UTF-8 as ``\\xNN`` (text, for
people), and ``pathHex`` beside it holds the exact bytes of the path, in lowercase hexadecimal
(for programs). ``pathHex`` is present only for such names. Messages that quote such a name show
it the same way. Each list item is one line, ``json.dumps(item, ensure_ascii=False)``; entries and
warnings are made from their parts (an entry restored from a digest index record is written as
the record holds it, without being built), which the tests hold to that encoding. Then, as
:func:`skills_core.display.display_json` does, an item holding a character a terminal would obey
(a control, a bidirectional override, an invisible character) has it written as a ``\\u``
escape, and a ``[`` after ``##`` as ``\\u005b``: the same JSON values, safe on a terminal and in
a CI log.

The command pauses the cyclic garbage collector while it runs (see :func:`run_manifest`).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring
from types import MappingProxyType
from typing import Final

from ..display import display, display_json_text
from ..server.catalog import Catalog
from ..server.model import PublishedSkill
from ..server.selection import looks_secret
from ..validation import Finding, Severity
from ._common import EXIT_OK, error, open_source, source_note

__all__ = ["run_manifest", "finding_json"]


def run_manifest(args: argparse.Namespace) -> int:
    """Run ``skills-core manifest``: print what ``serve`` would publish, and why not the rest.

    The cyclic garbage collector is paused while it runs (and resumed after, if it was on):
    the command builds one catalog and lets go of it at the end, so no cycle is worth looking
    for, and on thousands of skills the collector's passes over what is alive cost more than
    any other part of a warm start. The library never does this; a program may.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _manifest(args)
    finally:
        if collecting:
            gc.enable()


def _manifest(args: argparse.Namespace) -> int:
    source = open_source(
        args.roots,
        include_hidden=args.include_hidden,
        exclude=args.exclude,
        index=args.index,
        s3_endpoint=args.s3_endpoint,
    )
    progress = sys.stderr.isatty()
    if progress:
        sys.stderr.write(f"skills-core: scanning {display(', '.join(args.roots))} ...")
        sys.stderr.flush()
    catalog = source.scan()
    if progress:
        sys.stderr.write(f"\rskills-core: scanned {len(catalog.skills)} skills.      \n")
    note = source_note(source)
    if note is not None:
        error(f"manifest: {note}")
    if args.json:
        _write(_shown(_json_document(catalog)))
    else:
        _write(["".join(_text_lines(catalog)).encode("utf-8")])
    return EXIT_OK


def _text_lines(catalog: Catalog) -> list[str]:
    lines: list[str] = []
    for skill in catalog.skills:
        entry = skill.entry
        what = (
            "dynamic"
            if entry.is_dynamic
            else f"{len(entry.resources)} files, {entry.total_size} bytes"
        )
        lines.append(f"{display(entry.uri)}  ({what})\n")
        for finding in catalog.findings(skill):
            lines.append(
                f"    warning {display(finding.field or '/')}: {display(finding.message)}\n"
            )
        for path in _secrets(skill):
            lines.append(f"    warning {display(path)}: {_LOOKS_PUBLISHED}\n")
    for omitted in catalog.omitted:
        lines.append(f"omitted {display(omitted.uri or omitted.path)}: {display(omitted.reason)}\n")
    for problem in catalog.problems:
        lines.append(f"refused {display(problem.path)}: {display(problem.reason)}\n")
    for skipped in catalog.skipped:
        secret = _LOOKS_SKIPPED if looks_secret(skipped.path.rpartition("/")[2]) else ""
        lines.append(f"skipped {display(skipped.path)}: {display(skipped.reason)}{secret}\n")
    summary = f"{len(catalog.skills)} skills published, {len(catalog.omitted)} left out"
    if catalog.problems:
        summary += f", {len(catalog.problems)} entries refused"
    if catalog.skipped:
        summary += f", {len(catalog.skipped)} skipped"
    lines.append(summary + "\n")
    return lines


def _json_document(catalog: Catalog) -> list[bytes]:
    """The JSON document, one list item per line, as UTF-8 byte strings to write in order.

    Each item is encoded on its own (one character outside the BMP in a document of megabytes
    would otherwise make the whole text four bytes a character before it is encoded). An entry
    restored from a digest index record is written as the record holds it.
    """
    encode = json.JSONEncoder(ensure_ascii=False, default=_plain).encode
    sections: dict[str, Iterable[bytes]] = {
        "skills": _encoded_entries(catalog, encode),
        "omitted": [
            encode(
                {**_path(o.path), "uri": o.uri, "code": str(o.code), "reason": _text(o.reason)}
            ).encode()
            for o in catalog.omitted
        ],
        "warnings": [
            _warning_text(skill.uri, f).encode()
            for skill in catalog.skills
            for f in (*catalog.findings(skill), *_secret_findings(skill))
        ],
        "problems": [
            encode({**_path(p.path), "code": str(p.code), "reason": _text(p.reason)}).encode()
            for p in catalog.problems
        ],
        "skipped": [
            encode(
                {
                    **_path(s.path),
                    "code": str(s.code),
                    "reason": _text(s.reason),
                    "looksSecret": looks_secret(s.path.rpartition("/")[2]),
                }
            ).encode()
            for s in catalog.skipped
        ],
    }
    chunks = [b"{\n"]
    for number, (key, items) in enumerate(sections.items()):
        chunks.append(b'  "%s": [' % key.encode())
        first = True
        for item in items:
            chunks.append(b"\n    " if first else b",\n    ")
            chunks.append(item)
            first = False
        if not first:
            chunks.append(b"\n  ")
        chunks.append(b"]\n" if number == len(sections) - 1 else b"],\n")
    chunks.append(b"}\n")
    return chunks


_LOOKS_PUBLISHED: Final = "looks like a secret and is published: move it out of the skill folder"
_LOOKS_SKIPPED: Final = (
    " (and looks like a secret: --include-hidden or a copy of the folder would publish it; move "
    "it out of the skill folder)"
)


def _secrets(skill: PublishedSkill) -> list[str]:
    """The published files of ``skill`` whose names look like secrets, relative to its folder."""
    if not any(looks_secret(path.rpartition("/")[2]) for path in skill.files.values()):
        return []  # the common case: one pass over the names, no list built
    return [path for path in skill.files.values() if looks_secret(path.rpartition("/")[2])]


def _secret_findings(skill: PublishedSkill) -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            field="",
            code="secret-file",
            message=f"{path} {_LOOKS_PUBLISHED}",
            file=path,
        )
        for path in _secrets(skill)
    ]


def _encoded_entries(catalog: Catalog, encode: Callable[[object], str]) -> Iterator[bytes]:
    """``json.dumps(entry.to_json(), ensure_ascii=False)`` of each published entry, in UTF-8.

    A skill kept encoded has its entry's JSON text already (``encoded_entry``; a store replica's
    is its catalog's canonical text of the entry, the same JSON value), written as it is; for the
    others, skills that share a SKILL.md share its frozen frontmatter object, so each distinct
    frontmatter is encoded once (by identity, while the catalog keeps it alive), straight from
    its read-only form (:func:`_plain`); the rest of an entry is URIs, digests and sizes. Entries
    with fields of their own (``extra``) or ``"dynamic"`` resources are encoded whole.
    """
    frontmatters: dict[int, str] = {}
    string = encode_basestring
    for skill in catalog.skills:
        if skill.encoded_entry is not None:
            yield skill.encoded_entry
            continue
        entry = skill.entry
        resources = entry.resources
        if entry.extra or isinstance(resources, str):
            yield encode(entry.to_json()).encode()
            continue
        frontmatter = entry.frontmatter
        text = frontmatters.get(id(frontmatter))
        if text is None:
            text = frontmatters[id(frontmatter)] = encode(frontmatter)
        files = ", ".join(
            [
                f'{{"uri": {string(r.uri)}, "digest": {string(r.digest)}, "size": {r.size}}}'
                if not r.extra
                else encode(r.to_json())
                for r in resources
            ]
        )
        yield (
            f'{{"uri": {string(entry.uri)}, "frontmatter": {text}, "resources": [{files}]}}'
        ).encode()


def _warning_text(uri: str, finding: Finding) -> str:
    """The JSON text of one warning: ``uri`` and :func:`finding_json`, every string strict
    UTF-8 (:func:`_text`), made from its parts (a catalog can hold thousands)."""
    string = encode_basestring
    line = "" if finding.line is None else f', "line": {int(finding.line)}'
    return (
        f'{{"uri": {string(uri)}, "severity": {string(str(finding.severity))}, '
        f'"field": {string(_text(finding.field))}, "code": {string(_text(finding.code))}, '
        f'"message": {string(_text(finding.message))}{line}}}'
    )


def _plain(value: object) -> object:
    """The JSON encoder's hook for frozen JSON: a read-only mapping is encoded as its dict."""
    if type(value) is MappingProxyType:
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _shown(chunks: list[bytes]) -> list[bytes]:
    """The JSON document's chunks as :func:`skills_core.display.display_json` would write them.

    The same JSON values. In ASCII JSON the only characters to show otherwise are DEL (``json``
    escapes the other controls) and a ``##[``; a chunk free of both, or a whole document, is kept
    as it is after C-speed checks. Any other chunk (one item) goes through
    :func:`~skills_core.display.display_json_text`, which returns it as it is when it is safe.
    (Each chunk is decoded on its own, for the reason :func:`_json_document` encodes each.)
    """
    document = b"".join(chunks)
    plain = b"\x7f" not in document and b"##[" not in document
    if plain and document.isascii():
        return [document]
    if plain:  # only the chunks that are not ASCII may need anything
        return [chunk if chunk.isascii() else _shown_item(chunk) for chunk in chunks]
    return [
        chunk
        if chunk.isascii() and b"\x7f" not in chunk and b"##[" not in chunk
        else _shown_item(chunk)
        for chunk in chunks
    ]


def _shown_item(chunk: bytes) -> bytes:
    text = chunk.decode("utf-8")
    shown = display_json_text(text)
    return chunk if shown is text else shown.encode("utf-8")


def _write(chunks: list[bytes]) -> None:
    """Write ``chunks`` to stdout (bytes, whatever the locale says)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream put in stdout's place (tests, embedding)
        sys.stdout.write(b"".join(chunks).decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(b"".join(chunks))
    buffer.flush()


def _text(value: str) -> str:
    """``value`` as strict-UTF-8 text: each lone surrogate shown as ``\\xNN`` or ``\\uNNNN``.

    Names that are not UTF-8 reach Python as lone surrogates U+DC80..U+DCFF (one per byte,
    ``surrogateescape``); each is shown as the byte it stands for.
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(
            (f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}")
            if 0xD800 <= ord(c) <= 0xDFFF
            else c
            for c in value
        )
    return value


def _path(path: str) -> dict[str, str]:
    """``{"path": ...}``, with ``pathHex`` (the exact bytes) when the path is not UTF-8."""
    shown = _text(path)
    if shown is path:
        return {"path": path}
    return {"path": shown, "pathHex": path.encode("utf-8", "surrogateescape").hex()}


def finding_json(finding: Finding) -> dict[str, object]:
    """The JSON form of a finding, as ``manifest`` and ``validate`` print it."""
    out: dict[str, object] = {
        "severity": str(finding.severity),
        "field": finding.field,
        "code": finding.code,
        "message": finding.message,
    }
    if finding.line is not None:
        out["line"] = finding.line
    return out
