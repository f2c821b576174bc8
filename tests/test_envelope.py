"""The log envelope: decoding, line splitting and the wrapping CI systems and terminals add.

Inputs are the real logs of the shared corpus (their bytes, or their text re-encoded where a test
needs another encoding). GitLab's section markers have no real .NET job log in the corpus (a
known gap, see shared/reference/msbuild-format.md §6), so that test writes the markers exactly as
GitLab documents them (docs.gitlab.com, "Custom collapsible sections").
"""

from __future__ import annotations

import codecs
import io
import tracemalloc
from pathlib import Path

import pytest

from ci_agent.envelope import (
    CHUNK_BYTES,
    MAX_LINE_CHARS,
    EnvelopeInfo,
    decode_head,
    detect_encoding,
    iter_log_lines,
    iter_raw_lines,
)
from ci_agent.parsers import parse_stream
from tests.conftest import SHARED_FIXTURES

LOGS = SHARED_FIXTURES / "dotnet-logs"


def clean_lines(data: bytes, info: EnvelopeInfo | None = None) -> list[str]:
    return list(iter_log_lines(io.BytesIO(data), info))


def raw(name: str) -> bytes:
    path = LOGS / name
    if not path.exists():
        pytest.fail(f"missing shared fixture {path} (set CI_AGENT_SHARED)")
    return path.read_bytes()


RESTORE_TEXT_START = "Build started 4/19/2026 10:40:24 AM."


def restore_text() -> str:
    """The text of a real UTF-16LE (BOM, CRLF) PowerShell capture."""
    return raw("utf16-restore-failed-no-errors.log").decode("utf-16")


# --------------------------------------------------------------------------- encodings


def test_real_utf16le_bom_crlf_log() -> None:
    info = EnvelopeInfo()
    lines = clean_lines(raw("utf16-restore-failed-no-errors.log"), info)
    assert (info.encoding, info.bom, info.crlf) == ("utf-16-le", True, True)
    assert lines[0] == RESTORE_TEXT_START
    assert "Build FAILED." in lines
    assert not any("\r" in line or "\ufeff" in line or "\x00" in line for line in lines)


@pytest.mark.parametrize(
    ("codec", "bom", "expected_codec"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
        ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"),
        ("utf-16-le", b"", "utf-16-le"),
        ("utf-16-be", b"", "utf-16-be"),
        ("utf-8", codecs.BOM_UTF8, "utf-8"),
        ("utf-8", b"", "utf-8"),
    ],
    ids=["le-bom", "be-bom", "le-nobom", "be-nobom", "utf8-bom", "utf8"],
)
def test_each_encoding_with_and_without_bom(codec: str, bom: bytes, expected_codec: str) -> None:
    text = restore_text()
    data = bom + text.encode(codec)
    assert detect_encoding(data) == (expected_codec, len(bom))
    info = EnvelopeInfo()
    lines = clean_lines(data, info)
    assert lines == [line.rstrip("\r") for line in text.split("\n")][: len(lines)]
    assert lines[0] == RESTORE_TEXT_START and info.crlf


def test_utf8_bom_before_the_first_path_is_gone() -> None:
    lines = clean_lines(raw("godot-errors-only-bom.log"))
    assert lines[0].startswith(r"Z:\Programming\Game\Godot")


def test_lf_crlf_and_missing_final_newline() -> None:
    assert clean_lines(b"a\r\nb\nc") == ["a", "b", "c"]
    assert clean_lines(b"a\n\nb\n") == ["a", "", "b"]


def test_bare_cr_is_a_line_end_and_an_overwrite_hides_nothing() -> None:
    # Issue 12: a terminal shows only the last part, but an error printed before a progress bar
    # overwrote it was printed; classic Mac files end every line with a bare CR.
    assert clean_lines(b"progress 10%\rprogress 100%\n") == ["progress 10%", "progress 100%"]
    assert clean_lines(b"a\rb\r\rc\r") == ["a", "b", "c"]


# --------------------------------------------------------------------------- terminal escapes


def test_ansi_sgr_around_a_node_prefix() -> None:
    [line] = clean_lines(raw("jenkins-ansi-nodeprefix.txt"))
    assert line.startswith(r"     2>GenericCodeRunner\CompositeCode.cs(137,32): warning CS1591:")
    assert "\x1b" not in line


def test_osc8_hyperlink_around_the_code_leaves_the_code_only() -> None:
    data = raw("tl-error-links.linux.txt")
    assert b"\x1b]8;;https://example.com/\x1b\\AA0000\x1b]8;;\x1b\\" in data
    info = EnvelopeInfo()
    lines = clean_lines(data, info)
    assert info.ansi
    assert lines[1] == ("    directory/file(1,2,3,4): error AA0000: "
                        "this error has a link because it has an explicit link")
    assert lines[2].endswith("error AA0000: this error has a link because it has a keyword")
    assert not any("http" in line or "\x1b" in line for line in lines)
    assert lines[0] == "  project succeeded (0.2s)"  # the OSC 9;4 progress sequence before it is gone


def test_terminal_logger_cursor_control_is_gone() -> None:
    lines = clean_lines(raw("tl-multiline-warning.linux.txt"))
    assert "    directory/file(1,2,3,4): warning AA0000: " in lines
    assert "      Multi" in lines
    assert all("\x1b" not in line for line in lines)


# --------------------------------------------------------------------------- CI wrappers


def test_github_timestamps_and_workflow_commands() -> None:
    info = EnvelopeInfo()
    lines = clean_lines(raw("gha-docker-buildkit-cs0023.log"), info)
    assert info.github_actions
    # `##[group]Run ...`, then the ANSI-coloured echo of the script
    assert lines[0] == "Run docker build -t ***/catalog-api:latest -f src/Catalog.API/Dockerfile ."
    assert lines[1] == "docker build -t ***/catalog-api:latest -f src/Catalog.API/Dockerfile ."
    assert lines[-1] == "Process completed with exit code 1."  # ##[error] annotation
    assert not any(line[:4].isdigit() and "T" in line[:12] for line in lines)


def test_buildkit_step_prefixes_and_recap_lines() -> None:
    info = EnvelopeInfo()
    lines = clean_lines(raw("gha-docker-buildkit-cs0023.log"), info)
    assert info.buildkit
    error = ("/app/src/Catalog.API/Extensions/Extensions.cs(41,52): error CS0023: "
             "Operator '.' cannot be applied to operand of type 'void' "
             "[/app/src/Catalog.API/Catalog.API.csproj]")
    assert lines.count(error) == 2  # once under `#23 10.12 `, once in the recap under `10.12 `
    assert "  Determining projects to restore..." in lines  # `#21 0.800 ` removed, indentation kept
    assert "#21 DONE 14.7s" in lines  # step status lines have no seconds prefix: kept


def test_gitlab_section_markers() -> None:
    data = (
        b"\x1b[0Ksection_start:1714400000:build_dotnet[collapsed=true]\r\x1b[0KBuilding the solution\n"
        b"  Determining projects to restore...\n"
        b"\x1b[0Ksection_end:1714400000:build_dotnet\r\x1b[0K\n"
        b"\x1b[32;1mJob succeeded\x1b[0;m\n"
    )
    assert clean_lines(data) == ["Building the solution", "  Determining projects to restore...", "",
                                 "Job succeeded"]


# --------------------------------------------------------------------------- bounds


def test_newline_free_input_is_cut_and_counted_in_bounded_memory() -> None:
    size = 32 * 1024 * 1024
    data = b"x" * size + b"\nnext line\n"
    info = EnvelopeInfo()
    tracemalloc.start()
    try:
        lengths = [len(line) for line in iter_raw_lines(io.BytesIO(data), info)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lengths == [MAX_LINE_CHARS, len("next line")]
    assert info.truncated_lines == 1
    assert peak < 6 * CHUNK_BYTES, peak  # a few chunks' worth, never the 32 MiB line


def test_truncation_is_reported_by_parse() -> None:
    result = parse_stream(io.BytesIO(b"x" * (MAX_LINE_CHARS * 3) + b"\nBuild succeeded.\n"), "long.log")
    assert any("1 over-long line(s)" in note for note in result.notes)


def test_many_long_lines_each_counted() -> None:
    data = (b"y" * (MAX_LINE_CHARS + 10) + b"\n") * 5
    info = EnvelopeInfo()
    assert [len(line) for line in iter_raw_lines(io.BytesIO(data), info)] == [MAX_LINE_CHARS] * 5
    assert info.truncated_lines == 5


class ShortReads(io.RawIOBase):
    """A pipe-like stream: every read returns an odd number of bytes, splitting UTF-16 code units."""

    def __init__(self, data: bytes, step: int = 65_537) -> None:
        self._data = io.BytesIO(data)
        self._step = step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._data.read(self._step if size < 0 else min(size, self._step))


def test_utf16_read_boundary_inside_a_code_unit() -> None:
    text = restore_text()
    body = (text * (3 * 65_537 // len(text.encode("utf-16-le")) + 2)).encode("utf-16-le")
    expected = list(iter_raw_lines(io.BytesIO(codecs.BOM_UTF16_LE + body), EnvelopeInfo()))
    info = EnvelopeInfo()
    got = list(iter_raw_lines(ShortReads(codecs.BOM_UTF16_LE + body), info))  # type: ignore[arg-type]
    assert got == expected and info.encoding == "utf-16-le"
    assert not any("\ufffd" in line for line in got)


def test_utf16_surrogate_pair_across_the_chunk_boundary() -> None:
    # BOM (2 bytes) + filler code units, then a 4-byte surrogate pair whose halves straddle CHUNK_BYTES.
    filler_units = (CHUNK_BYTES - 2 - 2) // 2
    full_lines, rest = divmod(filler_units, 100)
    text = ("a" * 98 + "\r\n") * full_lines + "a" * rest + "\U0001d11e clef\r\nnext\r\n"
    data = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    assert data[CHUNK_BYTES - 2 : CHUNK_BYTES + 2].decode("utf-16-le") == "\U0001d11e"
    lines = list(iter_raw_lines(io.BytesIO(data), EnvelopeInfo()))
    assert lines[-2] == "a" * rest + "\U0001d11e clef" and lines[-1] == "next"
    assert len(lines) == full_lines + 2


def test_stray_bom_in_the_middle_of_a_file() -> None:
    # Two real UTF-8-BOM logs concatenated (`cat a.log b.log`): the second BOM lands mid-file.
    data = raw("godot-errors-only-bom.log") + raw("tl-eval-error-engine.win.txt")
    assert data.count(codecs.BOM_UTF8) == 2
    lines = clean_lines(data)
    assert not any("\ufeff" in line for line in lines)
    engine_error = "MSB0001 error EvaluationError: An error occurred during evaluation."
    assert any(line.endswith(engine_error) for line in lines)


def test_nul_and_invisible_characters_are_removed() -> None:
    assert clean_lines(b"a\x00b\xe2\x80\x8bc\n") == ["abc"]


def test_decode_head_cleans_like_the_full_reader(tmp_path: Path) -> None:
    data = raw("gha-docker-buildkit-cs0023.log")
    assert decode_head(data[:4096])[:3] == clean_lines(data)[:3]
