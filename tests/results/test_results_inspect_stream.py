"""A large inspect_ai ``.eval`` log is read by parts: the header by inspect_ai, the sample summaries
streamed one at a time, the transcripts never opened (issue 24).  The log is grown from one that
inspect_ai wrote (tests/results/_big_eval.py); the counts are checked against inspect_ai's own
reading of every sample."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from _big_eval import big_log, outcome, small_log

from trialscore.errors import EvaluationError
from trialscore.results.readers import read_counts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("inspect_ai", reason="the inspect extra (inspect_ai) is not installed")
    return small_log(tmp_path_factory.mktemp("inspect-small"))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_grown_log_counts_as_inspect_ai_reads_its_samples(template, tmp_path):
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    log = big_log(template, tmp_path / "big.eval", samples=1500, epochs=2, transcript_chars=2000)
    counts = read_counts([log])
    to_float = value_to_float()
    own: dict[str, list[int]] = {}
    with log.open("rb") as stream:  # its reader of a stream: the same samples, without a thread a member
        samples = read_eval_log(stream).samples
    for sample in samples:
        entry = own.setdefault(str(sample.id), [0, 0, 0])
        score = (sample.scores or {}).get("match")
        if sample.error is not None or score is None:
            entry[2] += 1
        else:
            entry[0] += 1
            entry[1] += to_float(score.value) == 1.0
    ours = {
        item: [graded, passed, errored]
        for item, graded, passed, errored in zip(
            counts.item.tolist(),
            counts.graded.tolist(),
            counts.c.tolist(),
            counts.errored.tolist(),
            strict=True,
        )
    }
    assert ours == own and len(ours) == 1500
    assert counts.stats.rows_read == 3000 and counts.stats.rows_errored == sum(v[2] for v in own.values()) > 0
    expected = sum(outcome(index, epoch, 0) == "C" for index in range(1500) for epoch in (1, 2))
    assert int(counts.c.sum()) == expected


@pytest.mark.slow
def test_a_log_still_being_written_is_read_from_its_journal_and_said_to_be_partial(template, tmp_path):
    log = big_log(template, tmp_path / "running.eval", samples=12000, transcript_chars=10, journal_only=True)
    with zipfile.ZipFile(log) as archive:
        names = archive.namelist()
    assert "summaries.json" not in names and "_journal/summaries/3.json" in names
    counts = read_counts([log])
    assert counts.stats.rows_read == 12000
    (partial,) = counts.stats.partial
    assert partial.status == "started"


@pytest.mark.slow
def test_a_summary_that_is_not_one_is_named_with_its_member_and_element(template, tmp_path):
    log = big_log(template, tmp_path / "ok.eval", samples=3, transcript_chars=10)
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(log) as real, zipfile.ZipFile(broken, "w") as out:
        for info in real.infolist():
            data = real.read(info)
            if info.filename == "summaries.json":
                data = data.replace(b'"epoch": 1', b'"epoch": "one"', 2)
            out.writestr(info.filename, data)
    with pytest.raises(
        EvaluationError, match=r"broken\.eval member 'summaries\.json': element 1 is not a sample"
    ):
        read_counts([broken])


def test_an_eval_log_that_is_no_zip_is_named(template, tmp_path):
    broken = tmp_path / "cut.eval"
    broken.write_bytes(template.read_bytes()[:100])  # a zip's first bytes, its central directory cut off
    with pytest.raises(EvaluationError, match=r"cut\.eval: cannot read an inspect_ai eval log: "):
        read_counts([broken], input_format="inspect")
