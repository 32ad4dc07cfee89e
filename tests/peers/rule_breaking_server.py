"""A stdio skills server that breaks exactly one rule of the extension, for ``check --server`` tests.

Usage: python rule_breaking_server.py MODE

It speaks both eras by hand (``server/discover`` and ``initialize``; a request carrying the modern
``_meta`` gets the 2026-07-28 fields ``resultType``, ``ttlMs`` and ``cacheScope``, a legacy one
does not) and serves the spec's pdf-processing skill with directory reads. With MODE ``clean`` it
breaks nothing; every other MODE breaks one rule, named after the code ``check`` gives it
(``MODES`` maps each mode to that code).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

from skills_core import spec_examples as ex  # noqa: E402

ROOT = "skill://pdf-processing"
SKILL = f"{ROOT}/SKILL.md"
EXTENSION = "io.modelcontextprotocol/skills"

#: Each mode, and the code ``skills-core check`` reports for it.
MODES: dict[str, str] = {
    "no-extension": "server-no-extension",
    "no-resources": "server-no-resources",
    "directory-read-string": "server-directory-read-value",
    "list-error": "server-list-failed",
    "get-error": "server-get-failed",
    "read-error": "server-read-failed",
    "list-no-skills": "server-bad-result",
    "no-result-type": "server-result-type",
    "no-ttl": "server-ttl-ms",
    "no-scope": "server-cache-scope",
    "twice": "server-duplicate-skill",
    "cursor-fails": "server-cursor-failed",
    "cursor-loop": "server-cursor-loop",
    "get-other": "server-get-uri",
    "get-differs": "server-get-differs",
    "get-cursor": "server-get-cursor",
    "two-contents": "server-read-contents",
    "size": "server-size-mismatch",
    "digest": "server-digest-mismatch",
    "frontmatter": "server-frontmatter-mismatch",
    "dir-unanswered": "server-directory-unanswered",
    "dir-undeclared": "server-directory-undeclared",
    "dir-missing": "server-directory-disagrees",
    "unlisted": "server-unlisted-file",
    "error-code": "server-error-code",
    "resources-list-name": "server-resources-list",
    "dynamic": "server-dynamic-skill",
    "name-mismatch": "name-mismatch",
    "bad-digest": "bad-digest",
}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def main() -> None:
    mode = sys.argv[1]
    files = dict(ex.FILES)
    if mode == "unlisted":
        files["templates/credit-note.md"] = b"# Credit note\n"
    listed = {path: data for path, data in files.items() if path != "templates/credit-note.md"}
    spec: Any = ex.entry_json()
    entry: dict[str, Any] = {
        "uri": SKILL,
        "frontmatter": dict(spec["frontmatter"]),
        "resources": [
            {"uri": f"{ROOT}/{path}", "digest": digest(data), "size": len(data)}
            for path, data in sorted(listed.items())
        ],
    }
    served = dict(files)
    if mode == "size":
        served["templates/invoice.md"] = files["templates/invoice.md"] + b"\n"
    elif mode == "digest":
        served["templates/invoice.md"] = files["templates/invoice.md"].replace(b"Amount", b"AMOUNT")
    elif mode == "frontmatter":
        entry["frontmatter"]["license"] = "MIT"
    elif mode == "dynamic":
        entry["resources"] = "dynamic"
    elif mode == "name-mismatch":
        entry["frontmatter"]["name"] = "pdf-tools"
    elif mode == "bad-digest":
        entry["resources"][1]["digest"] = entry["resources"][1]["digest"].upper()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        params = message.get("params") or {}
        result = answer(mode, message["method"], params, entry, served)
        if isinstance(result, int):
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": result, "message": "refused"},
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def answer(
    mode: str, method: str, params: dict[str, Any], entry: dict[str, Any], served: dict[str, bytes]
) -> object:
    modern = isinstance(params.get("_meta"), dict)
    cache: dict[str, Any] = {}
    if modern:
        cache = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "public"}
        if mode == "no-result-type":
            del cache["resultType"]
        elif mode == "no-ttl":
            del cache["ttlMs"]
        elif mode == "no-scope":
            cache["cacheScope"] = "shared"
    settings: object = {"directoryRead": mode != "dir-undeclared"}
    if mode == "directory-read-string":
        settings = {"directoryRead": "true"}
    elif mode == "no-extension":
        settings = True
    caps: dict[str, Any] = {"resources": {}, "extensions": {EXTENSION: settings}}
    if mode == "no-resources":
        del caps["resources"]
    if method == "server/discover":
        return {"supportedVersions": ["2026-07-28"], "capabilities": caps, **cache}
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "serverInfo": {"name": "rule-breaker", "version": "1"},
        }
    if method == "skills/list":
        return list_page(mode, params.get("cursor"), entry, cache)
    if method == "skills/get":
        uri = params.get("uri")
        if uri != SKILL:
            return -32603 if mode == "error-code" else -32602
        if mode == "get-error":
            return -32603
        got = dict(entry)
        if mode == "get-other":
            got["uri"] = "skill://other/SKILL.md"
        elif mode == "get-differs":
            got["resources"] = entry["resources"][:2]
        out = {"skill": got, **cache}
        if mode == "get-cursor":
            out["nextCursor"] = "x"
        return out
    if method == "resources/read":
        uri = params.get("uri", "")
        path = uri.removeprefix(ROOT + "/") if uri.startswith(ROOT + "/") else None
        if path is None or path not in served:
            return -32602
        if mode == "read-error" and path == "templates/invoice.md":
            return -32603
        data = served[path]
        item = {"uri": uri, "mimeType": "text/markdown", "text": data.decode()}
        if mode == "two-contents" and path == "templates/invoice.md":
            return {"contents": [item, {**item, "uri": f"{ROOT}/other.md"}], **cache}
        return {"contents": [item], **cache}
    if method == "resources/directory/read":
        if mode == "dir-unanswered":
            return -32601
        return directory(mode, params.get("uri"), served, cache)
    if method == "resources/list":
        name = "PDF tools" if mode == "resources-list-name" else "pdf-processing"
        skill_md = {"uri": SKILL, "name": name, "mimeType": "text/markdown"}
        return {"resources": [skill_md], **cache}
    return -32601


def list_page(mode: str, cursor: object, entry: dict[str, Any], cache: dict[str, Any]) -> object:
    if mode == "list-error":
        return -32603
    if mode == "list-no-skills":
        return {"entries": [entry], **cache}
    if mode in ("twice", "cursor-fails", "cursor-loop"):
        if cursor is None:
            return {"skills": [entry], "nextCursor": "page-2", **cache}
        if mode == "cursor-fails":
            return -32602
        if mode == "cursor-loop":
            return {"skills": [], "nextCursor": "page-2", **cache}
        return {"skills": [entry], **cache}
    return {"skills": [entry], **cache}


def directory(mode: str, uri: object, served: dict[str, bytes], cache: dict[str, Any]) -> object:
    if not isinstance(uri, str) or not (uri == ROOT or uri.startswith(ROOT + "/")):
        return -32602
    prefix = "" if uri == ROOT else uri.removeprefix(ROOT + "/") + "/"
    if prefix and not any(path.startswith(prefix) for path in served):
        return -32602
    children: dict[str, bool] = {}
    for path in served:
        if path.startswith(prefix):
            head, slash, _ = path[len(prefix) :].partition("/")
            children[head] = bool(slash)
    if mode == "dir-missing":
        children.pop("purchase-order.md", None)
    resources = [
        {
            "uri": f"{uri}/{name}",
            "name": name,
            "mimeType": "inode/directory" if is_dir else "text/markdown",
        }
        for name, is_dir in sorted(children.items())
    ]
    return {"resources": resources, "resultType": "complete"} if cache else {"resources": resources}


if __name__ == "__main__":
    main()
