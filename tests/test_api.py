"""The public API and the sans-IO promise: exports, docstrings, stdlib-only imports, no I/O in the core."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import skills_core

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skills_core"

#: Modules allowed to do I/O (docs/design.md#io-modules: the server's filesystem loader and its held
#: files, the host's cache store, the stdio adapters and the command line; the validation engine,
#: whose folder functions read skill folders). Everything else is the sans-IO core.
IO_MODULES = {
    "skills_core/server/filesystem.py",
    "skills_core/server/index_file.py",
    "skills_core/server/open_files.py",
    "skills_core/server/_walk.py",
    "skills_core/server/_fileio.py",
    "skills_core/check.py",
    "skills_core/host/cache_store.py",
    "skills_core/cli/__init__.py",
    "skills_core/cli/_common.py",
    "skills_core/cli/serve.py",
    "skills_core/cli/manifest.py",
    "skills_core/cli/validate.py",
    "skills_core/cli/diff.py",
    "skills_core/cli/host.py",
    "skills_core/cli/_watch.py",
    "skills_core/cli/check_server.py",
    "skills_core/cli/_servers.py",
    "skills_core/demo.py",
    "skills_core/__main__.py",
    # where this copy of the package lives, to start it again in a child process
    "skills_core/_self.py",
    # the object-store and git adapters of skills_core.sources, and their threads
    "skills_core/sources/s3.py",
    "skills_core/sources/git.py",
    "skills_core/sources/_background.py",
}
IO_PACKAGES = ("skills_core/adapters/",)

FORBIDDEN_IMPORTS = {
    "socket",
    "subprocess",
    "asyncio",
    "trio",
    "anyio",
    "random",
    "secrets",
    "time",
    "datetime",
    "threading",
    "multiprocessing",
    "logging",
    "shutil",
    "tempfile",
    "pathlib",
    "io",
    "select",
    "selectors",
    "signal",
    "urllib.request",
    "http",
    "os",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}


def core_modules() -> list[Path]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in IO_MODULES or rel.startswith(IO_PACKAGES):
            continue
        out.append(path)
    return out


def test_every_exported_name_exists_and_is_documented() -> None:
    assert len(set(skills_core.__all__)) == len(skills_core.__all__)
    for name in skills_core.__all__:
        obj = getattr(skills_core, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{name} has no docstring"


@pytest.mark.parametrize(
    "package", ["skills_core", "skills_core.server", "skills_core.host", "skills_core.http"]
)
def test_exports_lazy_names_and_type_checking_imports_agree(package: str) -> None:
    """``__all__`` is exactly the eager imports plus ``_LAZY``; each lazy name is also imported
    under ``TYPE_CHECKING`` from the module ``_LAZY`` names, relative to the package (so type
    checkers see what runs, and a vendored copy loads its own modules)."""
    module = importlib.import_module(package)
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(init.read_text(encoding="utf-8"))
    eager: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            for alias in node.names:
                if alias.asname == alias.name:  # the explicit re-export form
                    eager[alias.name] = node.module
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for inner in node.body:
                assert isinstance(inner, ast.ImportFrom), ast.unparse(inner)
                assert inner.module is not None
                for alias in inner.names:
                    assert alias.asname == alias.name, alias.name
                    typed[alias.name] = "." * inner.level + inner.module
    lazy = module._LAZY
    defined = {  # functions and classes the package defines itself
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")
    }
    assert typed == lazy
    assert not set(eager) & set(lazy)
    assert sorted(module.__all__) == sorted(set(eager) | set(lazy) | defined)
    for name, home in lazy.items():  # and each lazy name really loads from its module
        assert getattr(module, name) is getattr(importlib.import_module(home, package), name)
    assert set(module._LAZY) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = module.Nope


def test_module_all_lists_are_consistent() -> None:
    for path in core_modules():
        parts = path.relative_to(ROOT).with_suffix("").parts
        module_name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        assert exported is not None, f"{module_name} has no __all__"
        for name in exported:
            assert hasattr(module, name), f"{module_name}.__all__ names missing {name}"


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_core_module_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] not in FORBIDDEN_IMPORTS, (path, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            assert node.module.split(".")[0] not in FORBIDDEN_IMPORTS, (path, node.module)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, (path, node.func.id, node.lineno)


def test_core_modules_start_with_future_annotations_and_a_docstring() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{path} has no module docstring"
        futures = [
            node
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"
        ]
        assert futures, f"{path} lacks 'from __future__ import annotations'"


def test_import_with_the_standard_library_only() -> None:
    """``python -S -c "import skills_core"`` from the repository root (no site-packages)."""
    code = (
        "import sys, skills_core;"
        "bad = [m for m in ('trio', 'anyio', 'yaml', 'pydantic', 'mcp') if m in sys.modules];"
        "print(skills_core.__version__, bad)"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{skills_core.__version__} []"


def test_py_typed_marker_ships() -> None:
    assert (PACKAGE / "py.typed").exists()


def test_lazy_exports_resolve_and_unknown_names_raise() -> None:
    assert skills_core.Host.__name__ == "Host"
    assert "Host" in dir(skills_core)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = skills_core.Nope  # type: ignore[attr-defined]


def test_plain_import_stays_light() -> None:
    """``import skills_core`` loads neither the host nor the server nor the YAML parser."""
    code = (
        "import sys, skills_core;"
        "print(sorted(m for m in sys.modules if m.startswith(('skills_core.host', "
        "'skills_core.server', 'skills_core._yaml', 'skills_core.jsonrpc'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_manifest_and_validate_do_not_load_the_request_handler() -> None:
    """What ``manifest`` and ``validate`` import at start-up leaves out the request handler, its
    options and the JSON-RPC layer (they load when ``serve`` or a program asks for them)."""
    code = (
        "import sys, skills_core.cli.manifest, skills_core.cli.validate, skills_core.server;"
        "print(sorted(m for m in sys.modules if m in ('skills_core.server.handler', "
        "'skills_core.server.options', 'skills_core.server.cursors', 'skills_core.jsonrpc')));"
        "print(skills_core.server.SkillsServer.__module__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == ["[]", "skills_core.server.handler"]


def test_the_library_has_no_type_ignore() -> None:
    """mypy --strict checks all of it: a narrowing, a typed assignment or a cast says what a value
    is where the checker cannot see it, never a silenced error."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore" in line
    ]
    assert found == []


def test_the_package_imports_itself_relatively() -> None:
    """No module spells the package's own name in an import: a vendored copy must load itself."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] != "skills_core", (path, node.lineno, name)


#: Third-party packages whose import means I/O (sockets, event loops, an SDK's transports).
IO_LIBRARIES = {"httpx2", "anyio", "uvicorn", "mcp", "obstore"}
ADAPTERS = sorted(PACKAGE.joinpath("adapters").glob("*.py"))


def _adapter_imports(path: Path) -> tuple[set[str], set[str], list[str]]:
    """(top-level modules it imports, sibling adapters it imports, what it defines)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[str] = set()
    siblings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 0:
                imported.add(node.module.split(".")[0])
            elif node.level == 1:
                siblings.add(node.module.split(".")[0])
    defines = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    return imported, siblings, defines


@pytest.mark.parametrize("path", ADAPTERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_adapter_does_io_or_only_hands_names_on(path: Path) -> None:
    """``adapters/`` is exempt from the sans-IO check, so nothing may hide there that does no I/O:
    each module imports an I/O module or library (or an adapter that does), or is a face that
    defines nothing."""
    facts = {p.stem: _adapter_imports(p) for p in ADAPTERS}
    doing_io = {name for name, (imported, _, _) in facts.items() if imported & IO_IMPORTS}
    while True:  # through the adapters each imports, to a fixed point
        more = {n for n, (_, siblings, _) in facts.items() if siblings & doing_io} - doing_io
        if not more:
            break
        doing_io |= more
    _, _, defines = facts[path.stem]
    assert path.stem in doing_io or not defines, (
        f"{path.name} defines {defines} but does no I/O: it belongs in the core"
    )


IO_IMPORTS = FORBIDDEN_IMPORTS | IO_LIBRARIES
