"""The stacks `ci-agent init` knows: how each kind of repository is built and tested, and which
of them a repository is, from the marker files near its root."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_SKIP_DIRS = frozenset({".git", "node_modules", "bin", "obj", "target", "build", "dist", ".venv", "venv",
                        "vendor", "__pycache__"})
_MAX_DEPTH = 3  # .sln at the root, .csproj under src/<Project>/: deeper markers are not the build's


@dataclass(frozen=True)
class Stack:
    """How one kind of repository is built and tested: in CI (shell lines) and in the config
    (single commands, split like a shell would but never run by one)."""

    name: str
    label: str
    markers: tuple[str, ...]  # file names or `*.ext` patterns
    setup: str  # the setup step(s) as YAML lines at step indentation, or ""
    ci_build: str
    ci_test: str
    build: str
    test: str
    verify: str
    results: tuple[str, ...]


def _setup(action: str, with_lines: str) -> str:
    return f"      - uses: {action}\n        with:\n{with_lines}"


STACKS: tuple[Stack, ...] = (
    Stack("dotnet", ".NET", ("*.sln", "*.slnx", "*.csproj", "*.fsproj"),
          _setup("actions/setup-dotnet@67a3573c9a986a3f9c594539f4ab511d57bb3ce9 # v4.3.1",
                 "          dotnet-version: 8.0.x\n"),
          "dotnet build --nologo",
          "dotnet test --nologo --no-build --logger trx --results-directory TestResults",
          "dotnet build --nologo", "dotnet test --nologo --logger trx", "dotnet test --nologo",
          ("**/*.trx",)),
    Stack("node", "Node.js", ("package.json",),
          _setup("actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0",
                 "          node-version: lts/*\n"),
          "npm ci && npm run build --if-present", "npm test",
          "npm run build --if-present", "npm test", "npm test",
          ("**/junit*.xml",)),
    Stack("python", "Python", ("pyproject.toml", "setup.py"),
          _setup("actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0",
                 "          python-version: \"3.12\"\n"),
          "python -m pip install -e . pytest", "python -m pytest --junitxml=test-results/junit.xml",
          "python -m pip install -e .", "python -m pytest --junitxml=test-results/junit.xml",
          "python -m pytest", ("test-results/*.xml",)),
    Stack("rust", "Rust", ("Cargo.toml",), "",  # rustup and cargo come with GitHub's runners
          "cargo build --all-targets", "cargo test", "cargo build --all-targets", "cargo test",
          "cargo test", ()),
    Stack("go", "Go", ("go.mod",),
          _setup("actions/setup-go@d35c59abb061a4a6fb18e82ac0862c26744d6ab5 # v5.5.0",
                 "          go-version-file: go.mod\n"),
          "go build ./...", "go test ./...", "go build ./...", "go test ./...", "go test ./...", ()),
    Stack("maven", "Java (Maven)", ("pom.xml",),
          _setup("actions/setup-java@c5195efecf7bdfc987ee8bae7a71cb8b11521c00 # v4.7.1",
                 "          distribution: temurin\n          java-version: \"21\"\n"),
          "mvn -B -ntp -DskipTests package", "mvn -B -ntp test",
          "mvn -B -ntp -DskipTests package", "mvn -B -ntp test", "mvn -B -ntp test",
          ("**/target/surefire-reports/TEST-*.xml",)),
    Stack("gradle", "Java (Gradle)", ("build.gradle", "build.gradle.kts"),
          _setup("actions/setup-java@c5195efecf7bdfc987ee8bae7a71cb8b11521c00 # v4.7.1",
                 "          distribution: temurin\n          java-version: \"21\"\n"),
          "./gradlew assemble", "./gradlew test", "./gradlew assemble", "./gradlew test", "./gradlew test",
          ("**/build/test-results/test/TEST-*.xml",)),
)
STACK_NAMES = tuple(s.name for s in STACKS)
DOTNET = STACKS[0]


def _walk(root: Path) -> Iterator[tuple[int, str]]:
    """(depth, file name) of the files near the root, skipping dependency and output folders."""
    base = len(root.parts)
    for directory, dirnames, filenames in os.walk(root):
        depth = len(Path(directory).parts) - base
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        if depth >= _MAX_DEPTH:
            dirnames[:] = []
        for name in filenames:
            yield depth, name


def _matches(name: str, marker: str) -> bool:
    return name.endswith(marker[1:]) if marker.startswith("*") else name == marker


def detect_stacks(root: Path) -> list[Stack]:
    """Every stack with a marker file, the shallowest first (a root pyproject.toml of a .NET repo's
    tooling loses to the .sln beside it only by order of STACKS, when both are at the root)."""
    found: dict[str, int] = {}
    for depth, name in _walk(root):
        for stack in STACKS:
            if any(_matches(name, m) for m in stack.markers):
                found[stack.name] = min(depth, found.get(stack.name, depth))
    order = {s.name: i for i, s in enumerate(STACKS)}
    return [next(s for s in STACKS if s.name == n) for n in sorted(found, key=lambda n: (found[n], order[n]))]
