"""benchmarks/plot_results.py: the chart beside benchmarks/run.sh's table.

Reads a small sample table (data/cpu-sample.md: 8 cells at 1 and 2 threads and
one failed row) and checks the ratios it reads against the table's numbers,
then that the chart is a PNG of a real size. matplotlib is required (tools/setup.sh
installs python3-matplotlib): without it the chart test fails.

Then benchmarks/plot_results_report.sh, the tail of benchmarks/run.sh, on the same
table: the report embeds the chart that lies beside it, draws it with Debian's
/usr/bin/python3 even when the python3 first on PATH cannot, and without a chart
still holds the table."""
import os
import re
import struct
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "benchmarks", "plot_results.py")
REPORT = os.path.join(ROOT, "benchmarks", "plot_results_report.sh")
SAMPLE = os.path.join(HERE, "data", "cpu-sample.md")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import plot_results  # noqa: E402


def test_reads_each_cells_ratio_and_skips_the_failed_row():
    with open(SAMPLE, encoding="utf-8") as f:
        cells, skipped = plot_results.read_ratios(f.read())
    assert cells == [
        ("mlp", "1x256", 1, 0.61), ("mlp", "1x256", 2, 0.69),
        ("mlp", "16x256", 1, 0.79), ("mlp", "16x256", 2, 0.73),
        ("mlp", "256x256", 1, 0.91), ("mlp", "256x256", 2, 0.83),
        ("bert_layer", "1x32x768", 1, 0.87), ("bert_layer", "1x32x768", 2, 0.93),
    ]
    assert skipped == 1


def test_a_table_without_a_ratio_column_is_an_error():
    with pytest.raises(ValueError):
        plot_results.read_ratios("| model | shape | threads | disco ms |\n|---|---|---|---|\n| a | 1 | 1 | 2.0 |\n")


def test_chart_is_a_png_of_real_size(tmp_path):
    out = tmp_path / "chart.png"
    r = subprocess.run([sys.executable, SCRIPT, SAMPLE, str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    assert width >= 400 and height >= 300
    assert len(data) > 10000  # bars, labels and a legend, not an empty canvas


def test_no_chart_for_a_table_without_ratios(tmp_path):
    table = tmp_path / "t.md"
    table.write_text("no table here\n")
    out = tmp_path / "chart.png"
    r = subprocess.run([sys.executable, SCRIPT, str(table), str(out)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "no table" in r.stderr
    assert not out.exists()


def write_report(tmp_path, env):
    """Runs plot_results_report.sh on the sample into tmp_path/cpu-2026-12-01.md; returns (result, report path)."""
    out = tmp_path / "cpu-2026-12-01.md"
    r = subprocess.run([REPORT, SAMPLE, str(out), "CPU benchmark, 2026-12-01", "Machine: a test."],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r, out


def env_without_python():
    env = dict(os.environ)
    env.pop("PYTHON", None)
    return env


def test_report_embeds_the_chart_beside_it(tmp_path):
    _, out = write_report(tmp_path, env_without_python())
    lines = out.read_text().splitlines()
    assert lines[:4] == ["# CPU benchmark, 2026-12-01", "", "Machine: a test.", ""]
    assert re.fullmatch(r"!\[[^]]+\]\(cpu-2026-12-01\.png\)", lines[4]), lines[4]
    assert (tmp_path / "cpu-2026-12-01.png").read_bytes()[:8] == PNG_MAGIC
    with open(SAMPLE, encoding="utf-8") as f:
        assert lines[6:] == f.read().splitlines()  # the table as the harness wrote it


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no /usr/bin/python3 to default to")
def test_report_draws_with_debians_python_not_the_python3_first_on_path(tmp_path):
    # A python3 first on PATH that cannot draw, as a pyenv interpreter without matplotlib.
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "python3"
    fake.write_text("#!/bin/sh\necho 'fake python3: no matplotlib' >&2\nexit 1\n")
    fake.chmod(0o755)
    env = env_without_python()
    env["PATH"] = "%s:%s" % (fake_bin, env.get("PATH", "/usr/bin:/bin"))
    r, out = write_report(tmp_path, env)
    assert "fake python3" not in r.stderr
    assert "](cpu-2026-12-01.png)" in out.read_text()
    assert (tmp_path / "cpu-2026-12-01.png").exists()


def test_report_without_a_chart_still_holds_the_table(tmp_path):
    env = env_without_python()
    env["PYTHON"] = "false"  # an interpreter that cannot draw
    r, out = write_report(tmp_path, env)
    assert "no chart" in r.stderr
    text = out.read_text()
    assert "![" not in text
    assert "| mlp | 1x256 | 1 | 0.045 |" in text
    assert not (tmp_path / "cpu-2026-12-01.png").exists()
