"""The layers as drawn: a package imports only from the layers below it (or itself).

The allowed order is written once, here. An import inside a function or under
``TYPE_CHECKING`` counts like any other: a type is a dependency too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import wave_ls

# Lowest first. A package may import from its own layer's package only if it is itself, and
# from any package of a lower layer. Packages in one layer are independent of each other.
LAYERS: list[set[str]] = [
    {"log", "jsonrpc"},  # "jsonrpc": message checks both protocol adapters share
    {"runtime"},  # the engine: knows nothing of the features, the adapters or LSP
    {"agents", "chat_input", "tasks", "worktrees", "fake_model", "mcp"},  # features, one each
    {"subagents"},  # delegation: uses agents, tasks and worktrees
    {"session"},  # the SDK entry: assembles everything below
    {"server", "acp"},  # the two protocol adapters
    {"demo"},
    {"cli"},
    {"__main__"},
]
ROOT = Path(wave_ls.__file__).parent


def layer_of(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"wave_ls.{package} is in no layer: add it to LAYERS")


def top_package(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def imported_packages(path: Path) -> set[tuple[str, int]]:
    """``(package, line)`` of every ``wave_ls.<package>`` this module imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "wave_ls":
                modules = [f"wave_ls.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "wave_ls" and len(parts) > 1:
                found.add((parts[1], node.lineno))
    return found


def test_every_package_has_a_layer() -> None:
    packages = {top_package(p) for p in ROOT.rglob("*.py") if p.name != "__init__.py"}
    packages.discard("__init__")
    for package in packages:
        layer_of(package)


def test_no_package_imports_a_higher_or_sibling_layer() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.parent == ROOT and path.name == "__init__.py":
            continue
        own = top_package(path)
        for package, line in sorted(imported_packages(path)):
            if package == own or package == "__version__":
                continue
            if layer_of(package) >= layer_of(own):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line}: {own} imports {package}")
    assert wrong == [], "\n".join(wrong)


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    # The rule is enforced on real source text: a runtime module importing a feature fails.
    module = ROOT / "runtime" / "core.py"
    text = "from wave_ls.tasks import BackgroundTasks\n"
    probe = tmp_path / "probe.py"
    probe.write_text(text)
    assert imported_packages(probe) == {("tasks", 1)}
    assert layer_of("tasks") > layer_of(top_package(module))
