"""benchmarks/plot_results.py: the chart beside benchmarks/run.sh's table.

Reads a small sample table (data/cpu-sample.md: 8 cells at 1 and 2 threads and
one failed row) and checks the ratios it reads against the table's numbers,
then that the chart is a PNG of a real size. matplotlib is required (tools/setup.sh
installs python3-matplotlib): without it the chart test fails."""
import os
import struct
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "benchmarks", "plot_results.py")
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
