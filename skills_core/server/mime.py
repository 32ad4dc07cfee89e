"""MIME types of served files, from their names alone.

Theory of operation
-------------------
A skill file's ``mimeType`` appears in three places: ``resources/list`` items, the children of a
``resources/directory/read`` and the ``contents`` of a ``resources/read``. The three must agree, and
the first two are built without reading the file, so the type depends on the name only: a small
built-in table of extensions and a few well-known file names (the standard :mod:`mimetypes` module
is not used because it reads system files, which differ between machines).

* ``SKILL.md`` is always ``text/markdown`` (FMT-07), as is every ``.md`` file (FMT-11).
* Extensions are matched case-insensitively (``.MD`` is markdown).
* Anything unknown is ``application/octet-stream``: a safe "just bytes" answer. Whether the bytes
  go out as ``text`` or ``blob`` is decided separately, from the bytes (SIL-11).
* ``inode/directory`` is reserved for directories and never returned for a file (FMT-11, DIR-01).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from ..spec import SKILL_MD, SKILL_MD_MIME_TYPE

__all__ = ["OCTET_STREAM", "mime_type_for"]

#: The type of files whose name says nothing about their content.
OCTET_STREAM: Final = "application/octet-stream"

_TEXT: Final = "text/plain"

_BY_EXTENSION: Final = MappingProxyType(
    {
        # Text and documentation.
        "md": SKILL_MD_MIME_TYPE,
        "markdown": SKILL_MD_MIME_TYPE,
        "mdx": SKILL_MD_MIME_TYPE,
        "txt": _TEXT,
        "text": _TEXT,
        "rst": "text/x-rst",
        "adoc": "text/asciidoc",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "html": "text/html",
        "htm": "text/html",
        "css": "text/css",
        "xml": "application/xml",
        "xsd": "application/xml",
        "xsl": "application/xml",
        "svg": "image/svg+xml",
        # Data and configuration.
        "json": "application/json",
        "jsonl": "application/jsonl",
        "ndjson": "application/x-ndjson",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
        "ini": _TEXT,
        "cfg": _TEXT,
        "conf": _TEXT,
        "env": _TEXT,
        "sql": "application/sql",
        "graphql": "application/graphql",
        "ipynb": "application/x-ipynb+json",
        # Code and scripts.
        "py": "text/x-python",
        "pyi": "text/x-python",
        "js": "text/javascript",
        "mjs": "text/javascript",
        "cjs": "text/javascript",
        "jsx": "text/javascript",
        "ts": "text/x-typescript",
        "tsx": "text/x-typescript",
        "sh": "text/x-shellscript",
        "bash": "text/x-shellscript",
        "zsh": "text/x-shellscript",
        "ps1": "text/x-powershell",
        "rb": "text/x-ruby",
        "go": "text/x-go",
        "rs": "text/x-rust",
        "java": "text/x-java",
        "kt": "text/x-kotlin",
        "swift": "text/x-swift",
        "c": "text/x-c",
        "h": "text/x-c",
        "cc": "text/x-c++",
        "cpp": "text/x-c++",
        "hpp": "text/x-c++",
        "cs": "text/x-csharp",
        "php": "text/x-php",
        "pl": "text/x-perl",
        "lua": "text/x-lua",
        "r": "text/x-r",
        "j2": _TEXT,
        "jinja": _TEXT,
        "tmpl": _TEXT,
        "tpl": _TEXT,
        # Binary documents, images, archives, fonts.
        "pdf": "application/pdf",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "ico": "image/vnd.microsoft.icon",
        "bmp": "image/bmp",
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "woff": "font/woff",
        "woff2": "font/woff2",
        "ttf": "font/ttf",
        "otf": "font/otf",
        "wasm": "application/wasm",
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
        "mp4": "video/mp4",
    }
)

_BY_NAME: Final = MappingProxyType(
    {
        SKILL_MD: SKILL_MD_MIME_TYPE,
        "LICENSE": _TEXT,
        "LICENCE": _TEXT,
        "NOTICE": _TEXT,
        "README": _TEXT,
        "CHANGELOG": _TEXT,
        "Makefile": "text/x-makefile",
        "Dockerfile": "text/x-dockerfile",
    }
)


def mime_type_for(name: str) -> str:
    """Return the MIME type of a file called ``name`` (the last path segment, raw).

    >>> mime_type_for("SKILL.md"), mime_type_for("extract.PY"), mime_type_for("data.bin")
    ('text/markdown', 'text/x-python', 'application/octet-stream')
    """
    known = _BY_NAME.get(name)
    if known is not None:
        return known
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem:
        return OCTET_STREAM
    return _BY_EXTENSION.get(extension.lower(), OCTET_STREAM)
