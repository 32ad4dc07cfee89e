"""Helpers shared by the server tests: SKILL.md texts, requests in both eras, a tiny client."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skills_core import spec_examples as ex
from skills_core.server import (
    Catalog,
    DynamicSkill,
    MemorySource,
    OmittedSkill,
    PublishedSkill,
    ServerConnection,
    ServerOptions,
    SkillSource,
    SkillsServer,
)
from skills_core.spec import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION

KEY = b"0123456789abcdef0123456789abcdef"
MODERN = "2026-07-28"
EXT = "io.modelcontextprotocol/skills"


def skill_md(name: str, description: str = "Does things", extra: str = "", body: str = "") -> bytes:
    """A valid SKILL.md for ``name`` (``extra`` is more YAML, ``body`` the markdown after it)."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}".encode()


def meta(version: str = MODERN, capabilities: object = None) -> dict[str, Any]:
    """The modern request ``_meta`` (the client declares the extension unless told otherwise)."""
    return {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: {"extensions": {EXT: {}}}
        if capabilities is None
        else capabilities,
        META_CLIENT_INFO: {"name": "tests", "version": "1"},
    }


def request(
    method: str, params: Mapping[str, Any] | None = None, *, request_id: object = 1
) -> dict[str, Any]:
    """A modern request (``_meta`` added)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": meta()},
    }


def legacy_request(
    method: str, params: Mapping[str, Any] | None = None, *, request_id: object = 1
) -> dict[str, Any]:
    """A legacy request: no ``_meta``, and no ``params`` at all when there are none (mcp 2.3.0)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def spec_files(prefix: str = "pdf-processing/", *, credit_note: bool = False) -> dict[str, bytes]:
    """The spec's pdf-processing files under ``prefix``."""
    files = ex.FILES_WITH_CREDIT_NOTE if credit_note else ex.FILES
    return {prefix + path: data for path, data in files.items()}


def answer(connection: ServerConnection, message: object) -> Any:
    """``connection.handle(message)``, typed loosely for tests that index into the response."""
    return connection.handle(message)


class Client:
    """Drive one connection: ``call`` returns the result, ``error`` the error object."""

    def __init__(self, server: SkillsServer, *, legacy: bool = False) -> None:
        self.server = server
        self.connection: ServerConnection = server.connection()
        self.legacy = legacy
        self._next = 0
        if legacy:
            self.call(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            )
            assert (
                self.connection.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
                is None
            )

    def send(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        if self.legacy or method == "initialize":
            message = legacy_request(method, params, request_id=self._next)
        else:
            message = request(method, params, request_id=self._next)
        response = self.connection.handle(message)
        assert response is not None
        assert response["jsonrpc"] == "2.0"
        assert response["id"] == self._next
        return response

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        response = self.send(method, params)
        assert "error" not in response, response
        result: dict[str, Any] = response["result"]
        return result

    def error(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        response = self.send(method, params)
        assert "result" not in response, response
        error: dict[str, Any] = response["error"]
        assert isinstance(error["code"], int)
        assert isinstance(error["message"], str)
        return error

    def walk(self, method: str, key: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a paginated method, following ``nextCursor`` to the end."""
        items: list[Any] = []
        cursor = None
        for _ in range(100_000):
            page_params = dict(params or {})
            if cursor is not None:
                page_params["cursor"] = cursor
            result = self.call(method, page_params)
            items.extend(result[key])
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
        raise AssertionError("pagination did not end")


def server(source: SkillSource | Mapping[str, bytes] | None = None, **options: Any) -> SkillsServer:
    """A server over ``source`` (a mapping becomes a MemorySource; default: the spec's skill).

    ``options`` are :class:`ServerOptions` fields.
    """
    if source is None:
        source = MemorySource(spec_files())
    elif isinstance(source, Mapping):
        source = MemorySource(source)
    return SkillsServer(source, cursor_key=KEY, options=ServerOptions(**options))


class Generated(DynamicSkill):
    """A dynamic skill whose files live in a dict (and can change between calls)."""

    def __init__(self, uri: str, files: dict[str, bytes], *, listed: bool = True) -> None:
        self._uri = uri
        self.files = files
        self._listed = listed

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def listed(self) -> bool:
        return self._listed

    def read(self, file_path: str) -> bytes | None:
        return self.files.get(file_path)

    def list_directory(self, dir_path: str) -> Sequence[tuple[str, bool]] | None:
        prefix = dir_path + "/" if dir_path else ""
        names: dict[str, bool] = {}
        for path in self.files:
            if path.startswith(prefix):
                head, sep, _ = path[len(prefix) :].partition("/")
                names[head] = bool(sep) or names.get(head, False)
        if dir_path and not names:
            return None
        return sorted(names.items())


class CountingSource:
    """A memory source that counts its reads (the SkillSource protocol, by delegation)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.memory = MemorySource(files)
        self.reads = 0

    def scan(self) -> Catalog:
        return self.memory.scan()

    def poll(self, max_age_ms: int) -> Catalog | None:
        return self.memory.poll(max_age_ms)

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        return self.memory.recheck(uri)

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        self.reads += 1
        return self.memory.read(skill, file_path)

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None:
        return self.memory.list_directory(skill, dir_path)
