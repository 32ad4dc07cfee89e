"""``skills-core serve --http``: its options, its errors (exit 1 with one line), the key file."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from http_helpers import MODERN_META, discover, exchange, free_port, modern_headers, rpc, serving
from interop_helpers import child_env, write_spec_skill

from skills_core.cli import main
from skills_core.cli.serve import parse_bind


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_spec_skill(root)
    return root


def test_without_uvicorn_it_says_what_to_install(
    skills: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn -> ImportError
    assert main(["serve", "--http", "8000", str(skills)]) == 1
    err = capfd.readouterr().err
    assert "pip install 'skills-core[http]'" in err
    assert "serve --http needs uvicorn: pip install uvicorn (or, for an installed" in err
    assert err.count("\n") == 1


def test_without_uvicorn_the_protocol_module_names_the_package() -> None:
    """A vendored copy has no extra: the message names uvicorn itself first."""
    code = (
        "import sys; sys.modules['uvicorn.config'] = None; import skills_core.adapters.uvicorn_http"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), check=False
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: skills_core.adapters.uvicorn_http needs uvicorn: pip install uvicorn "
        "(or, for an installed skills-core, pip install 'skills-core[http]')"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8000", ("127.0.0.1", 8000)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:8443", ("::1", 8443)),
        ("localhost:65535", ("localhost", 65535)),
    ],
)
def test_bind_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_bind(text) == expected


@pytest.mark.parametrize("text", ["", "x", "0", "65536", "host:", ":80", "1.2.3.4:http", "-1"])
def test_bad_bind_exits_1(text: str, skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--http", text, str(skills)]) == 1
    assert "[HOST:]PORT" in capfd.readouterr().err


@pytest.mark.parametrize(
    "extra",
    [
        ["--path", "no-slash"],
        ["--allowed-origin", "localhost"],
        ["--allowed-host", ":80"],
        ["--head-timeout", "0"],
        ["--send-timeout", "inf"],
        ["--max-large-answers", "0"],
        ["--large-answer-queue", "-1"],
    ],
)
def test_bad_options_exit_1_before_serving(
    extra: list[str], skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--http", str(free_port()), *extra, str(skills)]) == 1
    err = capfd.readouterr().err
    assert err.startswith("skills-core: serve: ")
    assert err.count("\n") == 1


def test_missing_root_exits_1(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--http", "8000", str(tmp_path / "nope")]) == 1
    assert "nope" in capfd.readouterr().err


def test_bad_key_file_exits_1(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    short = tmp_path / "short.key"
    short.write_text("too short\n")
    assert main(["serve", "--http", "8000", "--cursor-key-file", str(short), str(skills)]) == 1
    assert "at least 32 bytes" in capfd.readouterr().err


def test_key_file_is_created_private_and_reused(skills: Path, tmp_path: Path) -> None:
    key = tmp_path / "k"
    with serving(skills, "--cursor-key-file", str(key)):
        created = key.read_bytes()
        assert key.stat().st_mode & 0o777 == 0o600
        assert len(created.strip()) == 64
    with serving(skills, "--cursor-key-file", str(key)):
        assert key.read_bytes() == created


def test_path_and_allowed_host_options(skills: Path) -> None:
    with serving(
        skills, "--path", "/skills", "--allowed-host", "skills.example", path="/skills"
    ) as served:
        status, _, _ = discover(served.port, "/skills")
        assert status == 200
        assert discover(served.port, "/mcp")[0] == 404


def test_inherited_key_is_used_when_there_is_no_key_file(skills: Path) -> None:
    """Two processes given the same SKILLS_CORE_CURSOR_KEY accept each other's cursors."""
    env = {"SKILLS_CORE_CURSOR_KEY": "e" * 64}

    def resources_list(port: int, cursor: str | None) -> Any:
        params: dict[str, Any] = {"_meta": MODERN_META}
        if cursor is not None:
            params["cursor"] = cursor
        body = rpc("resources/list", params)
        return exchange(port, "POST", "/mcp", modern_headers("resources/list"), body).json()

    with (
        serving(skills, "--page-size", "1", env=env) as first,
        serving(skills, "--page-size", "1", env=env) as second,
    ):
        cursor = resources_list(first.port, None)["result"]["nextCursor"]
        page = resources_list(second.port, cursor)
        assert "error" not in page
        assert page["result"]["resources"]


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """serve --http writes its configuration into os.environ: put it back afterwards."""
    from skills_core.adapters.asgi import AppConfig

    for name in AppConfig(roots=("x",), secret=b"k" * 32).to_environ():
        monkeypatch.setenv(name, "")


@pytest.mark.usefixtures("environ")
def test_what_serve_hands_to_uvicorn(
    skills: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """One path for any number of workers: the factory by import string, the config in the env."""
    import uvicorn

    from skills_core.adapters.asgi import AppConfig

    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    argv = ["serve", "--http", "0.0.0.0:9999", "--workers", "3", "--allowed-origin"]
    bounds = ["--head-timeout", "3", "--send-timeout", "7.5", "--max-large-answers", "2"]
    assert main([*argv, "https://app.example", *bounds, str(skills)]) == 0
    ((app, options),) = calls
    assert app == "skills_core.adapters.asgi:app_from_env"
    assert options["factory"] is True
    assert options["http"] == "skills_core.adapters.uvicorn_http:BoundedProtocol"
    assert (options["host"], options["port"], options["workers"]) == ("0.0.0.0", 9999, 3)
    assert options["proxy_headers"] is False
    config = AppConfig.from_environ(os.environ)
    assert config.roots == (str(skills),)
    assert config.allowed_hosts is None  # not loopback and no --allowed-host: said on stderr
    assert config.allowed_origins == ("https://app.example",)
    assert (config.head_timeout, config.send_timeout, config.max_large_answers) == (3, 7.5, 2)
    assert (config.idle_timeout, config.large_answer_queue) == (5, 64)  # the defaults
    assert config.secret is not None
    assert len(config.secret) == 64
    err = capfd.readouterr().err
    assert "DNS-rebinding protection is off" in err
    assert "serving at http://0.0.0.0:9999/mcp" in err
    assert "3 worker(s); each worker loads the catalog" in err


@pytest.mark.usefixtures("environ")
def test_the_parent_of_serve_http_does_not_walk_the_folders(
    skills: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """``initialize`` within a second of start at any catalog size (over HTTP too): the process
    that starts uvicorn checks the roots without a walk and loads nothing; the workers load in
    their threads. A missing root is still an error before any worker starts."""
    import uvicorn

    import skills_core.server as server_package

    walks: list[object] = []
    monkeypatch.setattr(server_package, "server_from_roots", lambda *a, **k: walks.append(a))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    assert main(["serve", "--http", "127.0.0.1:9999", str(skills)]) == 0
    assert walks == []
    assert main(["serve", "--http", "127.0.0.1:9999", str(skills / "missing")]) == 1
    assert "missing" in capfd.readouterr().err


@pytest.mark.usefixtures("environ")
def test_a_port_uvicorn_cannot_bind_exits_2(
    skills: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    def cannot_bind(app: str, **options: Any) -> None:
        raise SystemExit(1)

    monkeypatch.setattr(uvicorn, "run", cannot_bind)
    assert main(["serve", "--http", "[::1]:9999", str(skills)]) == 2
    assert "could not serve on [::1]:9999" in capfd.readouterr().err


@pytest.mark.usefixtures("environ")
def test_what_the_operations_flags_hand_to_uvicorn(
    skills: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The graceful timeout (uvicorn's own deadline a few seconds later, so the protocol's drain
    ends requests first), the proxy settings, our log handler for uvicorn's loggers, and to the
    workers: metrics, the log format, loading in a thread, a state folder removed on exit."""
    import uvicorn

    from skills_core.adapters.asgi import AppConfig

    calls: list[dict[str, Any]] = []
    configs: list[AppConfig] = []

    def run(app: str, **options: Any) -> None:
        calls.append(options)
        configs.append(AppConfig.from_environ(os.environ))
        assert os.path.isdir(str(configs[-1].state_dir))

    monkeypatch.setattr(uvicorn, "run", run)
    argv = ["serve", "--http", "8000", "--graceful-timeout", "12", "--metrics"]
    argv += ["--log-format", "json", "--log-level", "warning", "--proxy-headers"]
    argv += ["--forwarded-allow-ips", "10.0.0.0/8, 192.0.2.1", str(skills)]
    assert main(argv) == 0
    ((options,),) = [calls]
    assert options["timeout_graceful_shutdown"] > 12
    assert (options["proxy_headers"], options["forwarded_allow_ips"]) == (
        True,
        "10.0.0.0/8,192.0.2.1",
    )
    assert options["access_log"] is False
    assert options["log_config"]["loggers"]["uvicorn"]["handlers"] == ["skills_core"]
    assert "ssl_certfile" not in options
    (config,) = configs
    assert (config.metrics, config.log_format, config.log_level) == (True, "json", "warning")
    assert config.graceful_timeout == 12
    assert config.load_in_background
    assert not os.path.exists(str(config.state_dir))  # removed once uvicorn returned


def test_each_worker_says_what_it_left_out_once_loaded(skills: Path) -> None:
    """The parent no longer walks the folders, so what the walk found is said by the worker once
    its catalog is loaded (the skill count, then the folders left out), on stderr."""
    broken = skills / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter here\n")
    with serving(skills) as served:
        deadline = time.monotonic() + 30
        while "left out" not in served.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exchange(served.port, "GET", "/readyz").status == 200
        log = served.log.read_text()
    assert "ready: 1 skill(s) loaded" in log
    assert "1 skill folder(s) left out; `skills-core manifest` says why" in log
    assert log.index("ready: 1 skill(s)") < log.index("left out")
