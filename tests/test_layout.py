"""The package layout as a contract: one namespace, data flowing one way, no import cycles.

DESIGN.md: connectors -> stream -> structures -> algorithms -> stream (export) -> connectors (sinks).
Every project import is read from the source with ``ast`` (module level and inside
functions alike) and checked against the allowed directions below.
"""
from __future__ import annotations

import ast
import importlib.metadata
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: installed name -> folder in the repository
FOLDERS = {"vinestream": "vinestream", "vinestream.stream": "stream", "vinestream.structures": "structures",
           "vinestream.algorithms": "algorithms", "vinestream.connectors": "connectors"}

#: component -> the components it may import (besides itself)
ALLOWED = {
    "structures": set(),
    "algorithms": {"structures"},
    "connectors": {"stream.events"},
    "stream.events": set(),
    "stream.batching": {"stream.events", "structures"},
    "stream.pipeline": {"stream.batching", "stream.events", "stream.errors", "structures", "algorithms"},
    "stream.errors": set(),
    "stream.app": {"stream.pipeline", "stream.batching", "stream.events", "stream.errors", "stream.bench",
                   "structures", "algorithms", "connectors"},
    "stream.bench": {"stream.pipeline", "stream.batching", "stream.events", "stream.errors",
                     "structures", "algorithms", "connectors"},
    "stream": set(),
    "vinestream": {"stream.app", "stream.pipeline", "stream.events", "stream.batching", "stream.errors",
                   "structures", "algorithms", "connectors"},
}
#: where imports inside functions are fine: the CLI imports a command's modules only when it runs
#: (``vinestream --help`` must not load pyarrow, Kafka or CuPy), and the bench runner, a CLI of its own, the
#: Kafka benches only when they are asked for (the others run where kafka-python is missing)
LAZY_IMPORTS_ALLOWED = {"vinestream.stream.app.cli", "vinestream.stream.bench.runner",
                        # the package's public names load at first use: `vinestream run` imports the package before
                        # its start-up signal handler can be in place
                        "vinestream",
                        # the command's modules load inside its Ctrl-C guard
                        "vinestream.__main__"}


def modules() -> dict[str, Path]:
    out = {}
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def component(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts or module == "vinestream.__main__":
        return "vinestream"
    if parts[0] == "stream" and len(parts) > 1:
        return f"stream.{parts[1]}"
    return parts[0]


def project_imports(module: str, path: Path):
    """(imported module, is_module_level, line) for every import of a project module."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rsplit(".", 1)[0]
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target]
            if node.module is None or node.level:   # `from . import x`: x may be a module
                names += [f"{target}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in ("stream", "structures", "algorithms", "connectors"):
                yield name, id(node) in top_level, node.lineno, True
            elif name == "vinestream" or name.startswith("vinestream."):
                yield name, id(node) in top_level, node.lineno, False


ALL = modules()


def resolve(name: str) -> str | None:
    """The project module an import names (a name imported from a module resolves to the module)."""
    while name and name not in ALL:
        name = name.rpartition(".")[0]
    return name or None


@pytest.mark.parametrize("module", sorted(ALL))
def test_imports_follow_the_data_flow(module):
    src = component(module)
    allowed = ALLOWED[src] | {src}
    for name, top, line, bare in project_imports(module, ALL[module]):
        where = f"{ALL[module].relative_to(ROOT)}:{line}"
        assert not bare, f"{where} imports {name!r}: only the vinestream namespace exists once installed"
        target = resolve(name)
        assert target is not None, f"{where} imports {name!r}, which is no project module"
        dst = component(target)
        assert dst in allowed, f"{where}: {src} may not import {dst} ({name})"
        assert top or module in LAZY_IMPORTS_ALLOWED, (
            f"{where} imports {name} inside a function: import at module level (no import cycle needs hiding)")


def test_no_import_cycles_between_modules():
    graph = {m: {resolve(n) for n, top, _, _ in project_imports(m, p) if top} - {None, m}
             for m, p in ALL.items()}
    # a package's __init__ importing its own submodules is how packages re-export; not a cycle
    for m in graph:
        graph[m] = {t for t in graph[m] if not (t.startswith(m + ".") and ALL[m].name == "__init__.py")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle = [*stack[stack.index(t):], t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_mechanism_that_checks_is_alive():
    """The checks above see real imports (a rule over nothing would pass vacuously)."""
    pipeline = {component(resolve(n)) for n, *_ in project_imports("vinestream.stream.pipeline.pipeline",
                                                                   ALL["vinestream.stream.pipeline.pipeline"])}
    assert {"structures", "algorithms", "stream.batching"} <= pipeline
    assert component("vinestream.stream.app.cli") == "stream.app" and "structures" not in ALLOWED["structures"]


def test_every_package_folder_is_installed():
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {m for m, p in ALL.items() if p.name == "__init__.py"}
    assert declared == found


def test_installed_distribution_has_one_top_level_package():
    """After ``pip install .`` every file of the distribution lives under vinestream/ (no stream, structures...).

    Read from the installed wheel's RECORD (a source checkout's ``vinestream.egg-info`` lists the
    source tree instead, and sits first on ``sys.path`` when tests run from the repository root).
    """
    records = [d.read_text("RECORD") for d in importlib.metadata.distributions(name="vinestream")]
    records = [r for r in records if r]
    if not records:
        pytest.skip("vinestream is not installed from a wheel (tests run from the source tree)")
    for record in records:
        paths = [line.split(",")[0] for line in record.splitlines() if line.strip()]
        tops = {p.split("/")[0] for p in paths if p.endswith(".py") and not p.startswith("..")}
        if any("__editable__" in p for p in paths):
            continue                     # an editable install maps the folders instead of copying them
        assert tops == {"vinestream"}, tops
