"""The format registry: every parser is registered, and every registered parser is proven on real
files (errorformat's rule: a format without a fixture pair fails this test)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ci_agent.errors import UsageError
from ci_agent.parsers import LOG_PARSERS, XML_PARSERS, all_formats, parse_stream, sniff
from tests.conftest import LOCAL_FIXTURES, SHARED_FIXTURES

FIXBENCH = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"
# For each format, real files (shared corpus or tests/fixtures with provenance) that must sniff to it.
REAL_FILES: dict[str, list[Path]] = {
    "msbuild": [
        *sorted((SHARED_FIXTURES / "dotnet-logs").glob("*.log"))[:3],
        SHARED_FIXTURES / "dotnet-logs/tl-error-links.linux.txt",
    ],
    "dotnet_test": [
        SHARED_FIXTURES / "dotnet-logs/vstest-xunit-7-failures-utf16.log",
        *sorted((LOCAL_FIXTURES / "dotnet_test").glob("mtp-*.txt"))[:2],
    ],
    "trx": [
        SHARED_FIXTURES / "dorny/fixtures/dotnet-trx.trx",
        SHARED_FIXTURES / "dorny/fixtures/dotnet-xunitv3.trx",
    ],
    "junit": [
        SHARED_FIXTURES / "dorny/fixtures/jest-junit.xml",
        SHARED_FIXTURES / "enricomi/junit-xml/pytest/junit.fail.xml",
    ],
    "nunit": [SHARED_FIXTURES / "dorny/fixtures/dotnet-nunit.xml"],
    "xunit": [SHARED_FIXTURES / "enricomi/xunit/mstest/fixie.xml"],
    "compilers": [
        LOCAL_FIXTURES / "compilers/gcc-c-errors.log",
        LOCAL_FIXTURES / "compilers/tsc-pretty-false.log",
    ],
    "pytest_console": [LOCAL_FIXTURES / "pytest_console/pytest-default.log"],
    # The real `cargo test` output captured by bench/fixbench/capture.py.
    "cargo_test": [FIXBENCH / "rust-iniconf-off-by-one/outputs/build.log",
                   FIXBENCH / "rust-installments-assertion-after-refactor/outputs/build.log"],
    "go_test": [FIXBENCH / "go-catalog-off-by-one/outputs/build.log",
                FIXBENCH / "go-quota-nil-map/outputs/build.log"],
    "node_test": [FIXBENCH / "typescript-coupons-wrong-condition/outputs/build.log",
                  FIXBENCH / "typescript-latency-api-misuse/outputs/build.log"],
}

EXPECTED_FORMATS = {"msbuild", "dotnet_test", "trx", "junit", "nunit", "xunit", "compilers", "pytest_console",
                    "cargo_test", "go_test", "node_test"}


def test_every_planned_parser_is_registered() -> None:
    assert set(all_formats()) == EXPECTED_FORMATS


def test_every_registered_parser_has_real_fixtures() -> None:
    missing = [name for name in all_formats() if not REAL_FILES.get(name)]
    assert not missing, f"parsers without a real fixture: {missing}"


@pytest.mark.parametrize(
    ("name", "path"), [(name, path) for name, paths in REAL_FILES.items() for path in paths],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_real_file_sniffs_to_its_format(name: str, path: Path) -> None:
    assert path.exists(), path
    with path.open("rb") as fh:
        head = fh.read(64 * 1024)
    sniffed = sniff(head)
    assert name in sniffed.formats, (path.name, sniffed)
    kind = "xml" if name in XML_PARSERS else "log"
    assert sniffed.kind == kind


def test_parsers_declare_what_they_are() -> None:
    for parser in [*XML_PARSERS.values(), *LOG_PARSERS.values()]:
        assert parser.name and parser.description
    roots = [root for p in XML_PARSERS.values() for root in p.root_names]
    assert len(roots) == len(set(roots)), "two XML parsers claim the same root element"


def test_unknown_forced_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown format 'cobol'"):
        sniff(b"x", forced="cobol")


def test_unknown_xml_root_is_a_clear_run_error() -> None:
    result = parse_stream(io.BytesIO(b'<?xml version="1.0"?><coverage line-rate="0.5"/>'), "coverage.xml")
    assert result.run_errors and "<coverage>" in result.run_errors[0].message


def test_text_in_no_known_format_says_so() -> None:
    result = parse_stream(io.BytesIO(b"hello\nworld\n"), "notes.txt")
    assert result.format == "unknown"
    assert "not a format ci-agent reads" in result.run_errors[0].message


def test_dotnet_test_output_after_a_long_build_is_still_read() -> None:
    """More than the sniffed head of build output before the first test line: the .NET family
    (msbuild + dotnet_test) is enabled by either parser's marker, so the failures are not lost."""
    vstest = (SHARED_FIXTURES / "dotnet-logs/vstest-xunit-7-failures-utf16.log").read_bytes().decode("utf-16")
    build = "".join(
        f"  Restored /w/src/P{i}/P{i}.csproj (in 12 ms).\n  P{i} -> /w/src/P{i}/bin/Debug/net8.0/P{i}.dll\n"
        for i in range(2000)
    )
    log = "Build started.\n  /w/src/App/Program.cs(3,1): warning CS8618: x [/w/src/App/App.csproj]\n" + build
    assert len(log.encode()) > 64 * 1024
    result = parse_stream(io.BytesIO((log + vstest).encode()), "long.log")
    assert len(result.failures) == 7
    assert result.diagnostics and result.diagnostics[0].code == "CS8618"
