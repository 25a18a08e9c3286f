#!/usr/bin/env bash
# Same-run comparison of rdma:// with ucx_perftest and raw JUCX on one transport (two processes each).
#   communicator-rdma/bench/compare.sh [shm|tcp] [ITERATIONS]
# Needs: mvn -o test-compile -pl communicator-rdma, and ucx_perftest (Debian ucx-utils).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-shm}
iters=${2:-20000}
bwiters=$((iters / 10))
export UCX_ERROR_SIGNALS=
if [ "$mode" = tcp ]; then export UCX_TLS=tcp; else unset UCX_TLS || true; fi
cp_file=target/bench-classpath.txt
if [ ! -s "$cp_file" ]; then
  mvn -q -o dependency:build-classpath -Dmdep.outputFile="$PWD/$cp_file" -Dmdep.includeScope=test >/dev/null
fi
CP="$(cat "$cp_file"):target/classes:target/test-classes"
JAVA="java -cp $CP"
port=$((20000 + RANDOM % 20000))

perftest() { # test size
  ucx_perftest -p "$port" -t "$1" -s "$2" -n "$3" >/dev/null 2>&1 &
  local srv=$!
  sleep 1
  ucx_perftest 127.0.0.1 -p "$port" -t "$1" -s "$2" -n "$3" 2>/dev/null | awk -v t="$1" -v s="$2" '
    /Final:/ { printf "ucx_perftest %s %s B: latency p50 %s us (one-way for *_lat), bandwidth %.2f GB/s\n", t, s, $3, $7 / 1000 }'
  wait $srv || true
  port=$((port + 1))
}

pair() { # server-class server-args... -- client-args...
  local cls=$1; shift
  local sargs=() cargs=()
  while [ "$1" != -- ]; do sargs+=("$1"); shift; done; shift
  cargs=("$@")
  coproc SRV { $JAVA "$cls" "${sargs[@]}" 2>&1; }
  local pid=$SRV_PID line
  read -r line <&"${SRV[0]}"
  local p=${line#LISTENING }
  $JAVA "$cls" "${cargs[@]//PORT/$p}"
  wait "$pid" || true
}

echo "== transport: $mode (UCX_TLS=${UCX_TLS:-default}) $(date -u +%FT%TZ)"
perftest tag_lat 8 "$iters"
perftest stream_bw 1048576 "$bwiters"
perftest ucp_put_bw 1048576 "$bwiters"
pair io.rdmacomm.rdma.bench.RawJucxBaseline server 0 -- client 127.0.0.1 PORT lat "$iters"
pair io.rdmacomm.rdma.bench.RawJucxBaseline server 0 -- client 127.0.0.1 PORT put "$bwiters"
pair io.rdmacomm.rdma.bench.RawJucxBaseline server 0 -- client 127.0.0.1 PORT tag "$bwiters"
# does put + flush need the target's progress? (mapped application memory vs UCX-allocated memory)
pair io.rdmacomm.rdma.bench.RawJucxBaseline server 0 -- client 127.0.0.1 PORT idleput 1
RAW_UCX_ALLOC=1 pair io.rdmacomm.rdma.bench.RawJucxBaseline server 0 -- client 127.0.0.1 PORT idleput 1
# busyPoll=0 parks at once; no option = the rdma:// default (busyPoll=50us); 1ms spins through a round trip
for opts in "?busyPoll=0" "" "?busyPoll=1ms"; do
  pair io.rdmacomm.rdma.bench.RdmaStreamBench server "rdma://127.0.0.1:0$opts" -- client "rdma://127.0.0.1:PORT$opts" lat "$iters"
  pair io.rdmacomm.rdma.bench.RdmaStreamBench server "rdma://127.0.0.1:0$opts" -- client "rdma://127.0.0.1:PORT$opts" bw "$bwiters"
done
