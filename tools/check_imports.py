"""Check the import structure of `ci_agent`: no cycle, and no import that points up the layers.

    python tools/check_imports.py          # prints every violation; exit 1 when there is one
    python tools/check_imports.py DIR      # the same for another package folder (the tests use it)

Every `import` statement counts, also the ones inside functions and under `TYPE_CHECKING`: an
import placed in a function hides a dependency from the reader, not from the design. Importing a
package's `__init__` from one of its own modules is not counted (Python runs it first anyway).

The layers, lowest first. A module may import its own room and anything below it, never above.
Platforms are plug-ins: none imports another (`local` is the exception every platform may use: it
is the dry run and the test double).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "ci_agent"
# room -> layer. A room is the first component under ci_agent (a module or a package).
LAYERS: dict[str, int] = {
    # 0: values, text and process helpers everything may use
    "__init__": 0, "errors": 0, "proc": 0, "git": 0, "gitfacts": 0, "paths": 0, "report": 0,
    "envelope": 0, "secret_shapes": 0, "redact": 0, "exact": 0, "logguard": 0, "config": 0, "retry": 0,
    # 1: reading tool output
    "parsers": 1,
    # 2: the report and its renderings; reading the input files into it
    "distill": 2, "render": 2, "inputs": 2, "cluster": 2,
    # 3: checking and running what the model wrote; what the model is shown
    "patch": 3, "sandbox": 3, "sandbox_fs": 3, "verify_check": 3, "context": 3, "triage": 3,
    # 4: talking to Claude
    "llm": 4, "review": 4,
    # 5: the fix engine: attempts, ledgers, budget, the CI cycle, forge-neutral types
    "engine": 5,
    # 6: reviewers' slash commands, on top of the engine
    "slash": 6,
    # 7: platforms (GitHub, GitLab, local) and the GitLab webhook relay
    "platforms": 7, "relay": 7, "relay_http": 7,
    # 8: the command line, which only parses arguments and calls inward
    "cli": 8, "__main__": 8,
}
PLATFORMS = "platforms"
SHARED_PLATFORM_PARTS = {"local", "download", "__init__"}


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _named(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """The dotted names an import statement loads (`from a import b` loads `a.b` when that is a
    module of ours, else `a`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        parts = package.split(".")
        source = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    subs = [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known]
    return subs if subs and len(subs) == len(node.names) else [source, *subs]


def imports_of(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> dict[str, int]:
    """Modules of ours this module imports, with the line of the first import."""
    package = name if is_package else name.rsplit(".", 1)[0]
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for target in _named(node, package, known):
            while target and target not in known:
                target = target.rpartition(".")[0]
            own_parent = name.startswith(target + ".")
            if target and target != name and not own_parent:
                found.setdefault(target, node.lineno)
    return found


def graph(root: Path) -> tuple[dict[str, dict[str, int]], dict[str, Path]]:
    paths = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    known = set(paths)
    edges = {name: imports_of(ast.parse(path.read_text(encoding="utf-8")), name,
                              path.name == "__init__.py", known)
             for name, path in paths.items()}
    return edges, paths


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, {}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def room(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def violations(root: Path, layers: dict[str, int] | None = None) -> list[str]:
    """Every cycle, upward import and platform-to-platform import below package folder `root`."""
    layers = LAYERS if layers is None else layers
    edges, paths = graph(root)
    problems = [f"import cycle: {' -> '.join(c)}" for c in cycles(edges)]
    for name, targets in sorted(edges.items()):
        where = paths[name].relative_to(root.parent)
        mine = room(name)
        if mine not in layers:
            problems.append(f"{where}: room {mine!r} has no layer in tools/check_imports.py")
            continue
        for target, line in sorted(targets.items()):
            theirs = room(target)
            if theirs in layers and layers[theirs] > layers[mine]:
                problems.append(f"{where}:{line}: upward import of {target} "
                                f"(layer {layers[theirs]} from layer {layers[mine]})")
            if mine == theirs == PLATFORMS:
                a, b = name.split(".")[2:3], target.split(".")[2:3]
                if a and b and a != b and b[0] not in SHARED_PLATFORM_PARTS:
                    problems.append(f"{where}:{line}: platform {a[0]} imports platform {b[0]}")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else Path(__file__).resolve().parent.parent / PACKAGE
    problems = violations(root)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} import problem(s) in {root.name}/", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
