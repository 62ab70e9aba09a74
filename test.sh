#!/usr/bin/env bash
# Every test: the Rust workspace, then the Python package (built with maturin from
# crates/py into a wheel, installed, and tested with pytest, the Ray test included).
# Works on a fresh machine: the Python tests need python3 with pip; what they use
# (maturin, pytest, pyarrow, pandas, polars, ray) is installed with pip when missing,
# and a test that cannot run says why it skipped.
set -euo pipefail
cd "$(dirname "$0")"

cargo test --workspace

echo
echo "=== Python package (crates/py)"
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED the Python tests: python3 is not installed"
  exit 0
fi
need=()
for m in maturin pytest pyarrow pandas polars ray; do
  python3 -c "import $m" 2>/dev/null || need+=("$m")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]} (pip)"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${need[@]}" \
    || echo "warning: pip could not install ${need[*]}; tests that need them will skip or fail"
fi
if ! python3 -c "import maturin, pytest, pyarrow" 2>/dev/null; then
  echo "SKIPPED the Python tests: maturin, pytest or pyarrow is missing (pip install maturin pytest pyarrow)"
  exit 0
fi
# The dev profile shares the workspace's target directory with `cargo test` above.
wheels="$(pwd)/target/wheels-test"
rm -rf "$wheels"
python3 -m maturin build --profile dev -q -m crates/py/Cargo.toml -o "$wheels"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
  --force-reinstall --no-deps "$wheels"/storbench-*.whl
# Run from outside the source tree so `import storbench` is the installed package.
cd /tmp
python3 -m pytest -q -rs -p no:cacheprovider "$OLDPWD/crates/py/tests"
