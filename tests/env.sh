# What the tests drive for real, set up once (sourced by tests/run.sh and tests/stress.sh):
# installs from the distribution the servers and tools that are missing, and HdrHistogram's
# Python reader; exports PATH and VERNIER_PYTHON.
# command -> Debian package
declare -A needs=(
  [memcached]=memcached
  [redis-server]=redis-server
  [nginx]=nginx
  [nc]=netcat-openbsd
  [memcaslap]=libmemcached-tools
  [tmux]=tmux
  [ip]=iproute2
  [sshd]=openssh-server
  [openssl]=openssl
  [update-ca-certificates]=ca-certificates
  [wrk]=wrk
  [promtool]=prometheus
)
missing=()
for cmd in "${!needs[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${needs[$cmd]}")
done
if ((${#missing[@]})); then
  echo "tests/run.sh: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Installed servers must not start as system services: each test starts its own.
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"

# HdrHistogram's Python implementation (PyPI's `hdrhistogram`), the independent reader of
# the records' interval logs, and grpcio (the gRPC tests' server, fixtures/grpc/server.py),
# in a virtual environment of its own under target/.
py=target/python
if ! "$py/bin/python" -c 'import hdrh.log, grpc' >/dev/null 2>&1; then
  if ! python3 -m venv "$py" >/dev/null 2>&1; then
    echo "tests/run.sh: installing python3-venv" >&2
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
    python3 -m venv "$py"
  fi
  "$py/bin/pip" install -q hdrhistogram grpcio
fi
export VERNIER_PYTHON="$PWD/$py/bin/python"
