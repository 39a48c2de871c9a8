#!/usr/bin/awk -f
# The failing tests of a `cargo test` log, one a line, each after the test binary that ran it
# (`tests/run.rs: name`); a binary that ended without its `test result:` line (it crashed,
# or was killed) is named alone. Used by tests/run.sh and tests/stress.sh.
function close_binary() {
  if (binary != "" && !result) print "  " binary ": (ended without a test result: crashed or killed)"
}
/^ *Running / {
  close_binary()
  binary = $2
  if ($2 == "unittests") {
    # `Running unittests src/lib.rs (target/release/deps/vernier_stats-0123abcd)`
    crate = $4
    sub(/^\(.*\//, "", crate)
    sub(/-[0-9a-f]+\)$/, "", crate)
    binary = crate " " $3
  }
  result = 0
  next
}
/^test result: / { result = 1 }
/^test .* \.\.\. FAILED$/ { print "  " binary ": " $2 }
END { close_binary() }
