#!/usr/bin/env bash
# Creates .venv and installs the project with every extra (clients, Spark, test, dev tools).
# Idempotent: a second run only checks that the install is current.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "[bootstrap] creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
# setup.py + the C accelerator are in the stamp too: a change to them reinstalls (and so recompiles) at once
stamp=.venv/.installed-$(cat pyproject.toml setup.py plugin/kafka_placement/partitioning/_*.[ch] plugin/kafka_placement/assignment/_*.c | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "[bootstrap] installing kafka-placement[all] and the dev group into .venv"
  .venv/bin/python -m pip install -q -U 'pip>=25.1' wheel setuptools  # 25.1: dependency groups (--group)
  .venv/bin/python -m pip install -q -e '.[all]' --group dev
  rm -f .venv/.installed-* && touch "$stamp"
else
  # pyproject unchanged: still make sure the editable install points at this checkout (this also rebuilds
  # the optional C extension kafka_placement.partitioning._native in place).
  .venv/bin/python -m pip install -q --no-deps -e .
fi
echo "[bootstrap] ready: $(.venv/bin/python -c 'import kafka_placement, sys; print(kafka_placement.__file__)')"
