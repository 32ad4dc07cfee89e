"""A copy of the package vendored under another name works on its own, with no installed copy.

Hosts vendor the package (``myagent/_vendor/skills_core``), as pip vendors its dependencies. The
copy must never reach for a top-level ``skills_core``: an installed copy of another version would
be mixed in silently, and without one the import fails. Each test runs a fresh interpreter with
``-S`` (no site-packages processing, so the editable install of this checkout is invisible), the
vendored copy on ``PYTHONPATH`` and the site-packages folder after it (so the optional extras still
import), and checks that no module named ``skills_core`` was ever loaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENDORED = "myagent._vendor.skills_core"


@pytest.fixture(scope="module")
def vendored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``myagent/_vendor/skills_core``, a copy of this checkout's package."""
    top = tmp_path_factory.mktemp("vendor")
    target = top / "myagent" / "_vendor" / "skills_core"
    shutil.copytree(
        ROOT / "skills_core", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    for package in (top / "myagent", top / "myagent" / "_vendor"):
        (package / "__init__.py").write_text('"""A host that vendors skills_core."""\n')
    return top


def _run(vendored: Path, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(vendored), sysconfig.get_paths()["purelib"]])
    return subprocess.run(
        [sys.executable, "-S", *args],
        cwd=vendored,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


IMPORT_EVERY_MODULE = textwrap.dedent(
    """
    import importlib, importlib.util, inspect, pkgutil, sys
    assert importlib.util.find_spec("skills_core") is None, "an installed copy is visible"
    import myagent._vendor.skills_core as sc
    names = []
    for info in pkgutil.walk_packages(sc.__path__, sc.__name__ + "."):
        importlib.import_module(info.name)
        names.append(info.name)
    for name in sc.__all__:  # the lazy exports resolve inside the copy
        obj = getattr(sc, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__.startswith(sc.__name__ + "."), (name, obj.__module__)
    import myagent._vendor.skills_core.server as server
    for name in server.__all__:
        getattr(server, name)
    leaked = sorted(m for m in sys.modules if m == "skills_core" or m.startswith("skills_core."))
    assert not leaked, leaked
    print(len(names))
    """
)


def test_every_module_of_a_vendored_copy_imports(vendored: Path) -> None:
    result = _run(vendored, ["-c", IMPORT_EVERY_MODULE])
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 60  # every module, not a handful


ROUND_TRIP = textwrap.dedent(
    """
    import json, os, sys, tempfile
    from pathlib import Path
    import myagent._vendor.skills_core as sc
    from myagent._vendor.skills_core import spec_examples as ex
    from myagent._vendor.skills_core.host import DeliverToModel, RequestApproval
    from myagent._vendor.skills_core.jsonrpc import EncodedResult, ErrorObject
    from myagent._vendor.skills_core.server import server_from_roots

    with tempfile.TemporaryDirectory() as tmp:
        for rel, data in ex.FILES.items():
            path = Path(tmp, "pdf-processing", rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        server = server_from_roots([tmp], cursor_key=os.urandom(32))
        connection = server.connection()

        def send(method, params):
            answer = connection.answer(method, params)
            if isinstance(answer, ErrorObject):
                raise sc.JsonRpcError(answer.message, rpc_code=answer.code, method=method)
            return json.loads(answer.json) if isinstance(answer, EncodedResult) else answer

        host = sc.Host(policy=sc.HostPolicy(), approvals=sc.ApprovalStore())
        method, params = host.handshake_request(sc.Era.MODERN)
        host.on_handshake("docs", sc.Era.MODERN, send(method, params))
        asked = []

        def on_effect(item):
            if isinstance(item, RequestApproval):
                asked.append(item)
                return host.approve(item.prompt_id)
            return None

        out = sc.pump(host, host.load("docs", ex.SKILL_MD_URI), {"docs": send}, on_effect=on_effect)
        assert asked, "the approval function was never asked"
        delivered = [e for e in out if isinstance(e, DeliverToModel)]
        assert delivered, [type(e).__name__ for e in out]
    leaked = sorted(m for m in sys.modules if m == "skills_core" or m.startswith("skills_core."))
    assert not leaked, leaked
    print("ok")
    """
)


def test_a_vendored_copy_runs_a_server_host_round_trip_in_process(vendored: Path) -> None:
    result = _run(vendored, ["-c", ROUND_TRIP])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_demo_of_a_vendored_copy_starts_that_copy(vendored: Path) -> None:
    """``python -m <vendored> demo`` spawns ``python -m <vendored> serve``, not ``skills_core``."""
    result = _run(vendored, ["-m", VENDORED, "demo"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"-m {VENDORED} serve" in result.stdout
    assert "Done: every byte the model saw was verified" in result.stdout
