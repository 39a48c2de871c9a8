#!/usr/bin/env bash
# The test command (README, .ci/run): installs from the distribution what the tests drive
# for real and is missing, then runs every test of the workspace in the release profile,
# the one the binaries and benchmarks use, so the build is paid once.
set -euo pipefail
cd "$(dirname "$0")/.."

source tests/env.sh

# Every test binary runs even when one fails (`--no-fail-fast`), so one failure hides no
# other result; the failing tests are named again at the end.
log=target/test.log
mkdir -p target
status=0
cargo test --workspace --release -j2 --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?
if ((status)); then
  echo
  echo "tests/run.sh: failing tests (exit $status):"
  tests/failures.awk "$log"
fi
exit "$status"
