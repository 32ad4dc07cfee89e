"""Credentials stay where they are: never in the workers' configuration, never on a printed line.

``serve --http`` hands its workers an :class:`AppConfig` through the environment: it carries a
source URL and an S3 endpoint, and round-trips through that form, but never an S3 credential
(the workers take those from the environment they inherit). No line ``publish``, ``serve``,
``manifest`` or ``validate`` prints holds a credential, whether they succeed, are refused by the
store, or are given an endpoint with credentials in it. Real processes against a real SeaweedFS.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_helpers import free_port, stop, wait_until_answering
from interop_helpers import child_env
from seaweed_helpers import ACCESS_KEY, BUCKET, SECRET_KEY, Seaweed, seaweed
from server_helpers import skill_md

from skills_core.adapters.asgi import AppConfig

WRONG_ID = "AKIAWRONGACCESSKEY01"
WRONG_SECRET = "wrong-secret-never-to-be-printed-0123"
URL_USER = "AKIAURLUSERKEY000001"
URL_SECRET = "url-secret-never-to-be-printed-4567"
CREDENTIALS = (ACCESS_KEY, SECRET_KEY, WRONG_ID, WRONG_SECRET, URL_USER, URL_SECRET)


def assert_no_credential(text: str) -> None:
    for credential in CREDENTIALS:
        assert credential not in text, f"{credential!r} printed in:\n{text}"


@pytest.mark.parametrize(
    "source", ["s3://skills/prod/team", "s3://skills", "git:/srv/skills.git@main"]
)
def test_app_config_round_trips_a_source_and_an_endpoint_without_credentials(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", WRONG_SECRET)
    config = AppConfig(
        roots=(),
        source=source,
        s3_endpoint="http://127.0.0.1:8333",
        key_file="/run/secrets/cursor.key",
        ttl_ms=30_000,
        page_size=100,
    )
    environ = config.to_environ()
    assert AppConfig.from_environ(environ) == config
    assert environ["SKILLS_CORE_SOURCE"] == source
    assert environ["SKILLS_CORE_S3_ENDPOINT"] == "http://127.0.0.1:8333"
    assert all(name.startswith("SKILLS_CORE_") for name in environ)
    assert_no_credential("\n".join(f"{name}={value}" for name, value in environ.items()))


def test_an_endpoint_holding_credentials_is_refused_without_showing_them() -> None:
    config = AppConfig(
        roots=(),
        source="s3://skills/prod",
        s3_endpoint=f"http://{URL_USER}:{URL_SECRET}@127.0.0.1:1",
        secret=b"k" * 40,
    )
    with pytest.raises(ValueError, match="without credentials") as caught:
        config.build()
    assert_no_credential(str(caught.value))


# --- real processes ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def weed() -> Seaweed:
    return seaweed()


def tree(root: Path) -> Path:
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_bytes(skill_md(name, f"The {name} skill"))
    return root


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "skills_core", *args],
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert_no_credential(done.stdout + done.stderr)
    return done


def test_no_printed_line_holds_a_credential(weed: Seaweed, tmp_path: Path) -> None:
    root = tree(tmp_path / "tree")
    target = f"s3://{BUCKET}/credentials-{os.getpid()}"
    good = weed.env
    wrong = {**good, "AWS_ACCESS_KEY_ID": WRONG_ID, "AWS_SECRET_ACCESS_KEY": WRONG_SECRET}
    bare = {k: v for k, v in good.items() if k != "AWS_ENDPOINT_URL"}
    in_url = f"http://{URL_USER}:{URL_SECRET}@{weed.endpoint.removeprefix('http://')}"
    # success, in text and JSON
    assert run_cli("publish", str(root), target, env=good).returncode == 0
    assert run_cli("publish", "--json", str(root), target, env=good).returncode == 0
    assert run_cli("manifest", target, env=good).returncode == 0
    assert run_cli("validate", target, env=good).returncode == 0
    # refused by the store: every command fails, saying why, with no credential in the reason
    commands: list[tuple[str, ...]] = [
        ("publish", str(root), target),
        ("manifest", target),
        ("validate", target),
        ("serve", target),
    ]
    for args in commands:
        done = run_cli(*args, env=wrong)
        assert done.returncode != 0
        assert done.stderr.strip()
    # an endpoint with credentials in it is refused before anything is sent
    for args in [
        ("publish", str(root), target, "--s3-endpoint", in_url),
        ("manifest", target, "--s3-endpoint", in_url),
        ("serve", target, "--s3-endpoint", in_url),
    ]:
        done = run_cli(*args, env=bare)
        assert done.returncode != 0
        assert "without credentials" in done.stderr
    done = run_cli("publish", str(root), target, env={**bare, "AWS_ENDPOINT_URL": in_url})
    assert "without credentials" in done.stderr


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def test_serve_http_workers_get_the_url_and_endpoint_never_a_credential(
    weed: Seaweed, tmp_path: Path
) -> None:
    root = tree(tmp_path / "tree")
    target = f"s3://{BUCKET}/credentials-http-{os.getpid()}"
    assert run_cli("publish", str(root), target, env=weed.env).returncode == 0
    env = {k: v for k, v in weed.env.items() if k != "AWS_ENDPOINT_URL"}
    port = free_port()
    log = tmp_path / "serve.log"
    argv = [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}"]
    argv += ["--workers", "2", "--s3-endpoint", weed.endpoint, target]
    with log.open("wb") as err:
        process = subprocess.Popen(
            argv,
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            start_new_session=True,
        )
    try:
        wait_until_answering(port)
        deadline = time.monotonic() + 30
        while len(workers := children(process.pid)) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        for worker in workers:
            items = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
            config = [item.decode() for item in items if item.startswith(b"SKILLS_CORE_")]
            assert f"SKILLS_CORE_SOURCE={target}" in config
            assert f"SKILLS_CORE_S3_ENDPOINT={weed.endpoint}" in config
            assert_no_credential("\n".join(config))
    finally:
        stop(process)
    printed = log.read_text()
    assert "2 skill(s)" in printed
    assert_no_credential(printed)
