#!/usr/bin/env bash
# The tail of benchmarks/run.sh: writes the markdown report of a harness table
# with its chart beside it, so that it can be tested on a sample table
# (tests/tools/plot_results_test.py) without running the benchmark.
#   benchmarks/plot_results_report.sh TABLE OUT.md TITLE [PREFACE]
# OUT.md holds "# TITLE", the PREFACE paragraph, the chart's embed and TABLE.
# The chart is OUT.png (OUT.md's name, .png), drawn by plot_results.py and
# embedded by its bare file name, as the two lie side by side. It is a
# convenience: when it cannot be drawn (no matplotlib) the report is written
# without it, with a warning on stderr.
#
# The interpreter is $PYTHON, else Debian's /usr/bin/python3 (its
# python3-matplotlib), not whatever python3 comes first on PATH: a pyenv or venv
# interpreter there usually lacks matplotlib, and the chart was silently left out.
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 TABLE OUT.md TITLE [PREFACE]" >&2
  exit 2
fi
table=$1 out=$2 title=$3 preface=${4:-}
here=$(cd "$(dirname "$0")" && pwd)

python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi

chart="${out%.md}.png"
chart_line=""
if "$python" "$here/plot_results.py" "$table" "$chart"; then
  chart_line="![disco / ONNX Runtime time per model and shape, 1 and 2 threads]($(basename "$chart"))"
else
  echo "$0: no chart ($python $here/plot_results.py failed; it needs python3-matplotlib)" >&2
fi
{
  echo "# $title"
  echo
  if [ -n "$preface" ]; then
    echo "$preface"
    echo
  fi
  if [ -n "$chart_line" ]; then
    echo "$chart_line"
    echo
  fi
  cat "$table"
} > "$out"
echo "wrote $out${chart_line:+ and $chart}"
