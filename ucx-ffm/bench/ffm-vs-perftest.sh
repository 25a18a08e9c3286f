#!/usr/bin/env bash
# RawFfmBench beside ucx_perftest, alternating in each round so that both see the same machine load.
#   usage: ucx-ffm/bench/ffm-vs-perftest.sh [rounds=3] [shm|tcp]
# Needs JDK 22+ (JAVA_HOME, default temurin-25), ucx-utils, taskset, and the module compiled
# (./mvnw -pl ucx-ffm -o compile). Prints one line per run: perftest's own "Final" line reduced to
# JSON-ish key=value, and RawFfmBench's JSON line. ucx_perftest's latency is half the round trip;
# RawFfmBench prints both the round trip and half of it (half_rtt_p50_us).
set -uo pipefail
rounds=${1:-3}
transport=${2:-shm}
here=$(cd "$(dirname "$0")/.." && pwd)
java=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
m2=${HOME}/.m2/repository/org/slf4j
cp="$here/target/classes:$m2/slf4j-api/2.0.16/slf4j-api-2.0.16.jar:$m2/slf4j-simple/2.0.16/slf4j-simple-2.0.16.jar"
port=13390     # ucx_perftest's
ffm_port=13391 # RawFfmBench's

# loopback is the only network this machine may use (UCX would also wire up over eth0)
export UCX_NET_DEVICES=lo
if [ "$transport" = tcp ]; then
  export UCX_TLS=tcp
  lat_iters=20000 bw_iters=500  # tcp's tail under load makes 200k round trips take minutes
else
  unset UCX_TLS
  lat_iters=200000 bw_iters=2000
fi
# PIN=1: both tools get the same placement, server on the last CPU, client on the first (a pinned JVM
# shares its one CPU with its JIT and GC threads, so the default leaves placement to the scheduler)
if [ "${PIN:-0}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
  on_server="taskset -c $(($(nproc) - 1))" on_client="taskset -c 0"
else
  on_server="" on_client=""
fi

perftest() { # test size iters [extra]
  local test=$1 size=$2 iters=$3
  $on_server ucx_perftest -p $port -t "$test" >/dev/null 2>&1 &
  local server=$!
  # its client does not retry: wait until the server listens (a probe connection would be taken as the peer)
  for _ in $(seq 100); do ss -ltn "sport = :$port" | grep -q LISTEN && break; sleep 0.1; done
  local line
  line=$(timeout 300 $on_client ucx_perftest 127.0.0.1 -p $port -t "$test" -s "$size" -n "$iters" | grep Final)
  kill $server 2>/dev/null; wait $server 2>/dev/null
  # Final: iters  lat50%  lat_avg  lat_overall  bw_avg(MiB/s)  bw_overall  rate_avg  rate_overall
  echo "$line" | awk -v t="$test" -v s="$size" -v tr="$transport" \
    '{printf "{\"tool\":\"ucx_perftest\",\"test\":\"%s\",\"transport\":\"%s\",\"size\":%s,\"half_rtt_p50_us\":%s,\"lat_avg_us\":%s,\"gbps\":%.3f}\n", t, tr, s, $3, $4, $7*1048576/1e9}'
}

ffm_run() { # mode api size iters (the client retries until the server listens)
  $on_server "$java" --enable-native-access=ALL-UNNAMED -Xss1m -cp "$cp" io.rdmacomm.ucx.ffm.tools.RawFfmBench \
    serve --port $ffm_port --once >/dev/null 2>&1 &
  local server=$!
  timeout 300 $on_client "$java" --enable-native-access=ALL-UNNAMED -Xss1m -cp "$cp" io.rdmacomm.ucx.ffm.tools.RawFfmBench \
    "$1" --port $ffm_port --api "$2" --size "$3" --iters "$4" --window 32 2>/dev/null \
    || echo "{\"tool\":\"RawFfmBench\",\"mode\":\"$1\",\"api\":\"$2\",\"error\":\"run failed\"}"
  kill $server 2>/dev/null; wait $server 2>/dev/null
}

for round in $(seq 1 "$rounds"); do
  echo "# round $round ($transport) $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  perftest tag_lat 8 $lat_iters
  ffm_run latency tag 8 $lat_iters
  ffm_run latency am 8 $lat_iters
  perftest tag_bw 1048576 $bw_iters
  ffm_run bandwidth tag 1048576 $bw_iters
  ffm_run bandwidth am 1048576 $bw_iters
done
