"""Real git repositories in temp dirs for the patch engine tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_agent.patch.apply import TreeSnapshot, snapshot

# A .NET project with warnings as errors: what the strictness gates guard.
APP_CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Nullable>enable</Nullable>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
  </PropertyGroup>
</Project>
"""

IDENTITY = ["-c", "user.name=Test Person", "-c", "user.email=test@example.com"]


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, input: str | None = None) -> str:
        done = subprocess.run(["git", *IDENTITY, *args], cwd=self.path, input=input, text=True,
                              capture_output=True, check=False)
        assert done.returncode == 0, f"git {args} failed: {done.stderr}"
        return done.stdout

    def write(self, rel: str, data: str | bytes) -> Path:
        full = self.path / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data.encode() if isinstance(data, str) else data)
        return full

    def read(self, rel: str) -> bytes:
        return (self.path / rel).read_bytes()

    def commit_all(self, message: str = "init") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def snapshot(self) -> TreeSnapshot:
        return snapshot(self.path)

    def staged(self) -> str:
        return self.git("diff", "--cached", "--name-status")


def make_repo(path: Path, files: dict[str, str | bytes] | None = None) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    repo = Repo(path)
    for rel, data in (files or {}).items():
        repo.write(rel, data)
    repo.commit_all()
    return repo


BASE_FILES: dict[str, str | bytes] = {
    "src/App/Calc.cs": "namespace App;\n\npublic static class Calc\n{\n"
    "    public static int Add(int a, int b) => a - b;\n}\n",
    "tests/App.Tests/CalcTests.cs": "using Xunit;\n\npublic class CalcTests\n{\n    [Fact]\n"
    "    public void Adds()\n    {\n        Assert.Equal(3, App.Calc.Add(1, 2));\n    }\n}\n",
    "README.md": "# demo\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo", BASE_FILES)
