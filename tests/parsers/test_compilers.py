"""The compilers parser against real gcc/clang/rustc/go/mypy/ruff/tsc logs (tests/fixtures/compilers).

Expected values were written by reading each log (see its PROVENANCE.md), not from our output.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from ci_agent.envelope import HEAD_BYTES, decode_head
from ci_agent.parsers import parse_path, parse_stream, sniff
from ci_agent.parsers.compilers import PARSER
from ci_agent.report import Diagnostic, ParseResult, Severity
from tests.conftest import LOCAL_FIXTURES, SHARED_FIXTURES

FIXTURES = LOCAL_FIXTURES / "compilers"
FIXBENCH = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"
E, W = Severity.ERROR, Severity.WARNING
Row = tuple[Severity, str | None, int | None, int | None, str | None, str]

BROKEN_C = "src/c/broken.c"
TEMPLATES = "src/cpp/templates.cpp"
INVENTORY = "src/py/pkg/inventory.py"
LINT_ME = "src/py/pkg/lint_me.py"

CLANG_C: list[Row] = [
    (W, BROKEN_C, 9, 9, "-Wint-conversion",
     "incompatible pointer to integer conversion initializing 'int' with an expression of type 'char[6]'"),
    (E, BROKEN_C, 10, 20, None, "use of undeclared identifier 'totl'"),
    (W, BROKEN_C, 11, 11, "-Wint-conversion",
     "incompatible integer to pointer conversion initializing 'char *' with an expression of type 'int'"),
    (E, BROKEN_C, 12, 26, None, "too many arguments to function call, expected 2, have 3"),
]
MYPY_MESSAGES = [
    (16, 23, "arg-type", 'Argument 2 to "restock" has incompatible type "str"; expected "int"'),
    (17, 15, "attr-defined", '"Item" has no attribute "price"'),
    (18, 12, "return-value", 'Incompatible return value type (got "int", expected "str")'),
    (27, 17, "arg-type", 'Argument 1 to "mean" has incompatible type "list[int]"; expected "list[float]"'),
]
TSC: list[Row] = [
    (E, "src/a.ts", 6, 7, "TS2322", "Type 'string' is not assignable to type 'number'."),
    (E, "src/a.ts", 9, 23, "TS2339", "Property 'nmae' does not exist on type 'User'."),
    (E, "src/a.ts", 12, 7, "TS2741",
     "Property 'age' is missing in type '{ name: string; }' but required in type 'User'."),
]
EXPECTED: dict[str, list[Row]] = {
    "gcc-c-errors.log": [
        (W, BROKEN_C, 9, 17, "-Wint-conversion",
         "initialization of ‘int’ from ‘char *’ makes integer from pointer without a cast"),
        (E, BROKEN_C, 10, 20, None, "‘totl’ undeclared (first use in this function)"),
        (W, BROKEN_C, 11, 18, "-Wint-conversion",
         "initialization of ‘char *’ from ‘int’ makes pointer from integer without a cast"),
        (E, BROKEN_C, 12, 12, None, "too many arguments to function ‘add’"),
        (W, BROKEN_C, 11, 11, "-Wunused-variable", "unused variable ‘name’"),
        (W, BROKEN_C, 5, 12, "-Wunused-function", "‘unused_helper’ defined but not used"),
    ],
    "gcc-fatal-missing-header.log": [
        (E, "src/c/missing_header.c", 1, 10, None, "config_generated.h: No such file or directory"),
    ],
    "gcc-link-undefined.log": [
        (E, None, None, None, None, "undefined reference to `compute_checksum'"),
        (E, None, None, None, None, "ld returned 1 exit status"),
    ],
    "gxx-templates.log": [
        (E, TEMPLATES, 11, 21, None, "no matching function for call to ‘std::vector<Point>::push_back(int)’"),
        (E, TEMPLATES, 12, 29, None,
         "conversion from ‘int’ to non-scalar type ‘std::string’ "
         "{aka ‘std::__cxx11::basic_string<char>’} requested"),
        (E, TEMPLATES, 14, 12, None, "‘undeclared_total’ was not declared in this scope"),
        (W, TEMPLATES, 13, 9, "-Wunused-variable", "unused variable ‘unused’"),
    ],
    "clang-c-errors.log": CLANG_C,
    "clang-c-errors-color.log": CLANG_C,  # same run with ANSI colours: the envelope strips them
    "clang-link-undefined.log": [
        (E, None, None, None, None, "undefined reference to `compute_checksum'"),
        (E, None, None, None, None, "linker command failed with exit code 1 (use -v to see invocation)"),
    ],
    "clangxx-templates.log": [
        (E, TEMPLATES, 11, 12, None, "no matching member function for call to 'push_back'"),
        (E, TEMPLATES, 12, 17, None,
         "no viable conversion from 'int' to 'std::string' (aka 'basic_string<char>')"),
        (E, TEMPLATES, 14, 12, None, "use of undeclared identifier 'undeclared_total'"),
    ],
    "rustc-short.log": [
        (E, "src/rust/main.rs", 8, 30, "E0425",
         "cannot find value `missing_name` in this scope: not found in this scope"),
        (E, "src/rust/main.rs", 7, 25, "E0308", "mismatched types: expected `String`, found `i32`"),
    ],
    "rustc-human.log": [
        (E, "src/rust/main.rs", 8, 30, "E0425", "cannot find value `missing_name` in this scope"),
        (E, "src/rust/main.rs", 7, 25, "E0308", "mismatched types"),
    ],
    # Human format: the lint name from `#[warn(unused_mut)]` becomes the code; short format has none.
    "rustc-human-warnings.log": [
        (W, "src/rust/warn.rs", 3, 9, "unused_mut", "variable does not need to be mutable"),
        (W, "src/rust/warn.rs", 2, 9, "unused_variables", "unused variable: `unused`"),
    ],
    "rustc-short-warnings.log": [
        (W, "src/rust/warn.rs", 3, 9, None, "variable does not need to be mutable"),
        (W, "src/rust/warn.rs", 2, 9, None,
         "unused variable: `unused`: help: if this is intentional, prefix it with an underscore: `_unused`"),
    ],
    "go-build.log": [
        (E, "./main.go", 5, 2, None, 'imported and not used: "os"'),
        (E, "./main.go", 9, 18, None,
         'cannot use "three" (untyped string constant) as int value in variable declaration'),
        (E, "./main.go", 10, 21, None, "undefined: missingName"),
    ],
    "go-vet.log": [
        (E, "./main.go", 7, 2, None, "fmt.Printf format %d has arg name of wrong type string"),
    ],
    "mypy.log": [(E, INVENTORY, line, None, code, msg) for line, _, code, msg in MYPY_MESSAGES],
    "mypy-columns.log": [(E, INVENTORY, line, col, code, msg) for line, col, code, msg in MYPY_MESSAGES],
    "ruff-concise.log": [
        (E, LINT_ME, 1, 1, "I001", "Import block is un-sorted or un-formatted"),
        (E, LINT_ME, 1, 8, "F401", "`os` imported but unused"),
        (E, LINT_ME, 2, 8, "F401", "`sys` imported but unused"),
        (E, LINT_ME, 2, 13, "F401", "`json` imported but unused"),
        (E, LINT_ME, 7, 16, "F821", "Undefined name `undefined_name`"),
    ],
    "flake8.log": [
        (E, LINT_ME, 1, 1, "F401", "'os' imported but unused"),
        (E, LINT_ME, 2, 1, "F401", "'sys' imported but unused"),
        (E, LINT_ME, 2, 1, "F401", "'json' imported but unused"),
        (E, LINT_ME, 2, 11, "E401", "multiple imports on one line"),
        (E, LINT_ME, 6, 14, "E711", "comparison to None should be 'if cond is None:'"),
        (E, LINT_ME, 7, 16, "F821", "undefined name 'undefined_name'"),
        (E, LINT_ME, 8, 5, "E741", "ambiguous variable name 'l'"),
    ],
    "tsc-pretty-false.log": TSC,
    "tsc-pretty-true.log": TSC,
}


def rows(result: ParseResult) -> list[Row]:
    return [(d.severity, d.file, d.line, d.column, d.code, d.message) for d in result.diagnostics]


def parse_text(text: str, forced: str | None = "compilers") -> ParseResult:
    return parse_stream(io.BytesIO(text.encode("utf-8")), "inline.log", forced)


def by_message(result: ParseResult, fragment: str) -> Diagnostic:
    return next(d for d in result.diagnostics if fragment in d.message)


def test_every_fixture_log_has_expectations() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_log_sniffs_and_parses_to_the_printed_diagnostics(name: str) -> None:
    result = parse_path(FIXTURES / name)
    assert result.format == "compilers"
    assert rows(result) == EXPECTED[name]
    assert result.printed_diagnostics == len(EXPECTED[name])
    assert result.failures == [] and result.counts is None and result.run_errors == []


def test_notes_are_detail_of_the_diagnostic_before_them_not_diagnostics() -> None:
    gcc = parse_path(FIXTURES / "gcc-c-errors.log")
    assert all(d.severity is not Severity.INFO for d in gcc.diagnostics)
    too_many = by_message(gcc, "too many arguments")
    assert too_many.detail == "In function ‘main’\nsrc/c/broken.c:3:5: note: declared here"
    undeclared = by_message(gcc, "totl")
    assert undeclared.detail is not None and undeclared.detail.endswith(
        "src/c/broken.c:10:20: note: each undeclared identifier is reported only once "
        "for each function it appears in"
    )
    assert by_message(gcc, "unused_helper").detail == "At top level"

    gxx = parse_path(FIXTURES / "gxx-templates.log")
    push_back = by_message(gxx, "push_back")
    assert push_back.detail is not None
    assert push_back.detail.count("note:") == 4  # two candidates, each with a "no known conversion" note
    assert "/usr/include/c++/12/bits/stl_vector.h:1293:7: note: candidate:" in push_back.detail

    clang = parse_path(FIXTURES / "clangxx-templates.log")
    conversion = by_message(clang, "no viable conversion")
    assert conversion.detail is not None and conversion.detail.count("note:") == 5


def test_mypy_notes_with_urls_stay_with_their_error() -> None:
    result = parse_path(FIXTURES / "mypy.log")
    last = result.diagnostics[-1]
    assert last.detail == (
        'src/py/pkg/inventory.py:27: note: "list" is invariant -- see '
        "https://mypy.readthedocs.io/en/stable/common_issues.html#variance\n"
        'src/py/pkg/inventory.py:27: note: Consider using "Sequence" instead, which is covariant'
    )


def test_linker_errors_are_tool_origin_with_the_function_as_detail() -> None:
    gcc = parse_path(FIXTURES / "gcc-link-undefined.log")
    undefined, collect2 = gcc.diagnostics
    assert (undefined.origin, undefined.file) == ("ld", None)
    assert undefined.detail == "in function main (link_error.c:(.text+0xf))"
    assert collect2.origin == "collect2"
    clang = parse_path(FIXTURES / "clang-link-undefined.log")
    assert [d.origin for d in clang.diagnostics] == ["ld", "clang"]


def test_tsc_related_information_is_detail() -> None:
    result = parse_path(FIXTURES / "tsc-pretty-true.log")
    assert result.diagnostics[-1].detail == "src/a.ts:3:3 - 'age' is declared here."


def test_rustc_human_help_lines_are_detail_and_the_summary_is_dropped() -> None:
    result = parse_path(FIXTURES / "rustc-human.log")
    # The suggested code under a `help:` is kept too (issue 15): often it is the whole fix.
    assert result.diagnostics[1].detail == ("help: try using a conversion method\n"
                                            "7 |     let label: String = total(&values).to_string();")
    assert not any("aborting" in d.message for d in result.diagnostics)


def test_rustc_help_suggestions_in_the_diff_gutter_are_kept() -> None:
    # Real `cargo test` / `cargo clippy` output of fixbench's Rust cases (issue 15).
    missing_use = parse_path(FIXBENCH / "rust-tags-missing-use" / "outputs" / "build.log")
    assert [d.detail for d in missing_use.diagnostics] == [
        "help: consider importing this struct\n1 + use std::collections::HashMap;"] * 2
    (clippy,) = parse_path(FIXBENCH / "rust-bookmarks-clippy-deny" / "outputs" / "build.log").diagnostics
    assert clippy.detail is not None and clippy.detail.splitlines()[-3:] == [
        "help: change this to",
        "30 - pub fn dedupe(bookmarks: &Vec<Bookmark>) -> Vec<Bookmark> {",
        "30 + pub fn dedupe(bookmarks: &[Bookmark]) -> Vec<Bookmark> {",
    ]
    (call,) = parse_path(FIXBENCH / "rust-blog-changed-signature" / "outputs" / "build.log").diagnostics
    assert call.detail is not None and call.detail.endswith("slugify(&post.title, /* usize */));")
    assert "note: function defined here\nhelp: provide the argument\n11 |" in call.detail


def _dotnet_logs() -> list[Path]:
    folder = SHARED_FIXTURES / "dotnet-logs"
    return sorted(p for p in folder.iterdir() if not p.name.endswith((".json", ".md")))


def test_the_dotnet_corpus_is_there() -> None:
    assert len(_dotnet_logs()) >= 20


@pytest.mark.parametrize("log", _dotnet_logs(), ids=lambda p: p.name)
def test_dotnet_logs_do_not_sniff_as_compilers_and_yield_nothing_when_forced(log: Path) -> None:
    head = log.read_bytes()[:HEAD_BYTES]
    assert not PARSER.sniff(decode_head(head))
    assert "compilers" not in sniff(head).formats
    assert parse_path(log, forced="compilers").diagnostics == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("C:\\src\\a.c:3:4: error: boom", (E, "C:\\src\\a.c", 3, 4, None, "boom")),
        ("D:/w/a.cpp:3:4: warning: unused [-Wunused]", (W, "D:/w/a.cpp", 3, 4, "-Wunused", "unused")),
        ("C:\\src\\a.ts(3,7): error TS2322: Type 'x'.", (E, "C:\\src\\a.ts", 3, 7, "TS2322", "Type 'x'.")),
        ("<command-line>:1:1: error: bad macro", (E, "<command-line>", 1, 1, None, "bad macro")),
        ("src/a.py:3:5:3:9: error: end positions  [misc]", (E, "src/a.py", 3, 5, "misc", "end positions")),
        ("/p/a.js:1:10: 'x' is defined but never used. [Error/no-unused-vars]",
         (E, "/p/a.js", 1, 10, "no-unused-vars", "'x' is defined but never used.")),
        ("a.py:1:80: W291 trailing whitespace", (W, "a.py", 1, 80, "W291", "trailing whitespace")),
        ("gcc: fatal error: no input files", (E, None, None, None, None, "no input files")),
        ("/usr/bin/ld: cannot find -lfoo: No such file or directory",
         (E, None, None, None, None, "cannot find -lfoo: No such file or directory")),
        ("ld.lld: error: undefined symbol: f", (E, None, None, None, None, "undefined symbol: f")),
    ],
)
def test_single_line_shapes(line: str, expected: Row) -> None:
    assert rows(parse_text(line)) == [expected]


@pytest.mark.parametrize(
    "line",
    [
        "http://x:80: error: not a file",
        "see https://example.com:8443/a.c:3:4: for details",
        "12:34:56: error: a timestamp, not a file",
        "2026-12-02 12:34:56: warning: a timestamp, not a file",
        "localhost:8080: error: connection refused",
        "10.0.0.1:8080: error: connection refused",
        "C:\\src\\A.cs(3,7): error CS0103: The name 'x' does not exist [C:\\src\\A.csproj]",
        "src/A.cs(3,7): warning CS0168: unused [src/A.csproj]",
        "MSBUILD : error MSB1008: Only one project can be specified.",
        "Found 3 errors in the same file, starting at: src/a.ts:6",
        "error: aborting due to 2 previous errors",
        "error: externally-managed-environment",
        "warning: 2 warnings emitted",
        "   at Ns.C.M() in /src/x.cs:line 19",
        "Time Elapsed 00:00:01.23",
        "a:" * 10000,
        "a:1:" * 10000,
        "x" * 200_000,
        "./" * 50_000 + "main.g:1:2: no go file",
        "  src/a.c:3:4: error: indented lines are excerpts, not headers",
    ],
    ids=lambda s: s[:40],
)
def test_hostile_lines_yield_nothing(line: str) -> None:
    result = parse_text(line)
    assert result.diagnostics == [], result.diagnostics
    assert not PARSER.sniff([line])


def test_a_200k_character_path_is_read_in_full_by_the_consumer() -> None:
    # Through parse_stream the envelope cuts lines at 64 KiB; the consumer itself has no limit.
    path = "d/" * 100_000 + "a.c"
    consumer = PARSER.consumer("long.log")
    consumer.feed(f"{path}:1:2: error: deep")
    consumer.feed("a:" * 10_000)
    (diag,) = consumer.finish().diagnostics
    assert (diag.file, diag.line, diag.column, diag.message) == (path, 1, 2, "deep")


def test_repeated_identical_diagnostics_are_kept_once_but_counted() -> None:
    text = "\n".join(["src/a.h:3:4: warning: shadow [-Wshadow]"] * 5)
    result = parse_text(text)
    assert len(result.diagnostics) == 1
    assert result.printed_diagnostics == 5


def test_an_orphan_note_is_an_info_diagnostic() -> None:
    result = parse_text("src/a.c:1:1: note: only a note")
    assert rows(result) == [(Severity.INFO, "src/a.c", 1, 1, None, "only a note")]


def test_sniff_looks_for_a_rustc_location_after_a_bare_header() -> None:
    assert not PARSER.sniff(["error: something", "more text"])
    assert PARSER.sniff(["error[E0425]: cannot find value", " --> src/main.rs:2:5"])


def test_unique_diagnostics_are_capped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    import ci_agent.parsers.compilers as compilers

    monkeypatch.setattr(compilers, "MAX_UNIQUE", 2)
    result = parse_text("\n".join(f"src/a.c:{n}:1: error: e{n}" for n in range(1, 6)))
    assert [d.line for d in result.diagnostics] == [1, 2]
    assert result.printed_diagnostics == 5
    assert result.notes == ["3 further unique diagnostic(s) not kept (cap 2)"]


def test_gcc_function_context_applies_only_to_its_own_file() -> None:
    result = parse_text(
        "src/a.c: In function ‘main’:\n"
        "src/a.c:3:4: error: first\n"
        "src/b.c:5:6: error: second, another translation unit\n"
    )
    assert [d.detail for d in result.diagnostics] == ["In function ‘main’", None]



def test_go_vet_type_errors_behind_the_vet_prefix_are_read() -> None:
    # Real `go vet ./...` output of fixbench's go-shortener-rename-half-done (issue 15).
    result = parse_path(FIXBENCH / "go-shortener-rename-half-done" / "outputs" / "build.log")
    assert rows(result) == [(E, "cmd/shorty/main.go", 46, 19, None,
                             "s.Lookup undefined (type *store.Store has no field or method Lookup)")]


def test_go_vet_call_errors_keep_have_and_want() -> None:
    result = parse_path(FIXBENCH / "go-retry-changed-signature" / "outputs" / "build.log")
    (diag,) = result.diagnostics
    assert (diag.file, diag.line, diag.column, diag.message) == (
        "cmd/mirror/main.go", 34, 39, "too many arguments in call to retry.Do")
    assert diag.detail == ("have (context.Context, number, time.Duration, func() error)\n"
                           "want (context.Context, retry.Policy, func() error)")


@pytest.mark.parametrize("line", ["vet: " + "a:" * 10000, "vet: " * 20000 + "x.go:1:2: deep",
                                  "vet: vet: a.go"], ids=["colons", "prefixes", "double"])
def test_hostile_vet_lines_are_linear_and_claim_nothing_odd(line: str) -> None:
    started = time.perf_counter()
    result = parse_text(line)
    assert time.perf_counter() - started < 2
    assert result.diagnostics == []


@pytest.mark.parametrize("line", [" " * 50_000 + "1" * 50_000 + " " * 50_000 + "+x",
                                  "1" * 100_000 + " " * 100_000 + "|"], ids=["suggestion", "snippet"])
def test_hostile_help_snippets_are_read_in_linear_time(line: str) -> None:
    text = f"error[E0425]: x\n --> src/a.rs:1:1\nhelp: consider\n{line}\n{line}\n"
    started = time.perf_counter()
    parse_text(text)
    assert time.perf_counter() - started < 2
