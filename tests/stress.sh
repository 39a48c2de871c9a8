#!/usr/bin/env bash
# Finds flaky end-to-end tests before CI does: runs the end-to-end test binaries N times
# while a second load competes for a core, and counts the failures of each test.
#
#   tests/stress.sh N [BINARY...]       e.g. tests/stress.sh 5, tests/stress.sh 3 run faults
#
# BINARY names a file of tests/ without `.rs` (default: every one). The competing load is
# `stress-ng --cpu 1` pinned to core STRESS_CPU (default 0, where the pinned tests put
# their target; `STRESS_LOAD=none` runs without it, `STRESS_LOAD=spin` with a shell loop).
# Logs go to target/stress/ITERATION-BINARY.log; the summary (every test that failed at
# least once, with its count) is printed at the end and kept in target/stress/summary.txt.
# Exit 0 when every test passed every time, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
runs=$1
shift
binaries=("$@")
if ((${#binaries[@]} == 0)); then
  for f in tests/*.rs; do
    name=$(basename "$f" .rs)
    [[ $name == support ]] || binaries+=("$name")
  done
fi

source tests/env.sh
load=${STRESS_LOAD:-stress-ng}
if [[ $load == stress-ng ]] && ! command -v stress-ng >/dev/null 2>&1; then
  echo "tests/stress.sh: installing stress-ng" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends stress-ng >/dev/null
fi

# The test executables, built once, by name.
declare -A exe
while IFS=$'\t' read -r name path; do
  exe[$name]=$path
done < <(cargo test --workspace --release -j2 --no-run --message-format=json 2>/dev/null |
  python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["test"] and m.get("executable"):
        print(m["target"]["name"] + "\t" + m["executable"])
')
for b in "${binaries[@]}"; do
  [[ -n ${exe[$b]:-} ]] || { echo "tests/stress.sh: no test binary '$b'" >&2; exit 2; }
done

out=target/stress
rm -rf "$out"
mkdir -p "$out"
competitor=""
stop_competitor() { [[ -n $competitor ]] && kill "$competitor" 2>/dev/null || true; }
trap stop_competitor EXIT
cpu=${STRESS_CPU:-0}
case $load in
  stress-ng) stress-ng --cpu 1 --taskset "$cpu" --timeout 0 --quiet & competitor=$! ;;
  spin) taskset -c "$cpu" bash -c 'while :; do :; done' & competitor=$! ;;
  none) ;;
  *) echo "tests/stress.sh: STRESS_LOAD is stress-ng, spin or none, not '$load'" >&2; exit 2 ;;
esac
echo "tests/stress.sh: ${binaries[*]}, $runs times, competing load: $load${competitor:+ on core $cpu}" >&2

started=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  for b in "${binaries[@]}"; do
    log="$out/$i-$b.log"
    t0=$(date +%s)
    # As cargo runs an integration test: from its package's directory.
    status=0
    (cd workbench && CARGO_MANIFEST_DIR="$PWD" "${exe[$b]}") >"$log" 2>&1 || status=$?
    # The header failures.awk reads the binary's name from, as cargo prints it.
    sed -i "1i\\     Running tests/$b.rs ($b)" "$log"
    passed=$(grep -Eo '^test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$log" | tail -1 || true)
    echo "run $i/$runs $b: exit $status in $(($(date +%s) - t0)) s: ${passed:-no test result}" >&2
  done
done

{
  echo "tests/stress.sh: $runs runs of ${binaries[*]} with $load${competitor:+ on core $cpu}, $(($(date +%s) - started)) s"
  failures=$(for log in "$out"/*-*.log; do tests/failures.awk "$log"; done | sort | uniq -c | sort -rn)
  if [[ -z $failures ]]; then
    echo "every test passed every time"
  else
    echo "failures (count of $runs, test):"
    echo "$failures"
  fi
} | tee "$out/summary.txt"
! grep -q '^failures' "$out/summary.txt"
