from buildstats.report import Step, summary


def test_summary_lines():
    steps = [Step("deps", 12.2, True), Step("compile", 95.0, False), Step("test", 31.4, False)]
    assert summary(steps) == [
        "deps          12s",
        "compile       95s",
        "test          31s",
        "total        139s  (cache hits 33%)",
    ]
