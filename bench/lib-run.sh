# Shared by bench/soak and bench/clients; sourced, not run. Starts servercomm and runs clientcomm's classes from
# this repository's build, on the JDK bin/lib/launch.sh's pick_java picks (JAVA_HOME, else the newest 22+: ucx-ffm).
ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
source "$ROOT/bin/lib/launch.sh"   # pick_java, java_major, await_listening
JAVA="$(pick_java)"
read -r -a JVM_FLAGS <<< "${BENCH_JVM_FLAGS:--Xms512m -Xmx512m -XX:+UseParallelGC}"
if (( $(java_major "$JAVA") >= 22 )); then
    JVM_FLAGS+=(--enable-native-access=ALL-UNNAMED)
fi
export UCX_ERROR_SIGNALS=""
export UCX_LOG_LEVEL="${UCX_LOG_LEVEL:-fatal}"
for m in servercomm clientcomm; do
    [[ -d "$ROOT/$m/target/lib" ]] || { echo "$m is not built: (cd $ROOT && ./mvnw -q -DskipTests package)" >&2; exit 1; }
done
cp_of() { echo "$(ls "$ROOT/$1/target/$1-"*.jar | grep -v sources | head -1):$ROOT/$1/target/lib/*"; }
SERVERCOMM=("$JAVA" "${JVM_FLAGS[@]}" -cp "$(cp_of servercomm)" io.rdmacomm.servercomm.ServerMain)
CLIENT_JAVA=("$JAVA" "${JVM_FLAGS[@]}" -cp "$(cp_of clientcomm)")

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n "${BENCH_KEEP_WORK:-}" ]]; then
        echo "logs kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ucx_tls shm|tcp: the UCX environment of every process started from now on.
ucx_tls() {
    case "$1" in
        shm) unset UCX_TLS ;;
        tcp) export UCX_TLS=tcp ;;
        *) echo "unknown UCX environment '$1': shm or tcp" >&2; exit 2 ;;
    esac
}

# start_servercomm URI [ARGS...]: starts servercomm in the background with further servercomm ARGS; sets SERVER_PID
# and SERVER_EP (its 'listening' URI).
start_servercomm() {
    "${SERVERCOMM[@]}" --endpoint "$1" --verbose "${@:2}" > "$WORK/server.out" 2> "$WORK/server.err" &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    if ! await_listening "$WORK/server.out" "$SERVER_PID" 1 30; then
        echo "servercomm did not start:" >&2
        cat "$WORK/server.err" >&2
        exit 1
    fi
    SERVER_EP="$(awk '/^listening /{print $2; exit}' "$WORK/server.out")"
    # the provider the server runs on, from its INFO line
    SERVER_PROVIDER="$(sed -n 's/.*provider=[a-z-]* runs on \([a-z-]*\).*/\1/p' "$WORK/server.err" | head -1)"
}

# Samplers for loops that run while a timed phase does: they set a variable instead of printing, and fork nothing
# (an ls | wc and an awk per sample, every 0.2 s, took about a tenth of the machine's CPU while the clients connected).
# count_into VAR DIR: the entries of DIR, 0 if it is gone (a process that ended).
count_into() {
    local -a entries=("$2"/*)
    if [[ -e "${entries[0]}" || -L "${entries[0]}" ]]; then
        printf -v "$1" '%d' "${#entries[@]}"
    else
        printf -v "$1" '%d' 0
    fi
}
# rss_into VAR PID: PID's resident set in KiB, 0 if it ended.
rss_into() {
    local key value rest
    printf -v "$1" '%d' 0
    { while read -r key value rest; do
        if [[ "$key" == VmRSS: ]]; then printf -v "$1" '%d' "$value"; return 0; fi
    done < "/proc/$2/status"; } 2>/dev/null || true   # ended (no status file): 0, and no error under set -e
}
# file_has FILE TEXT: whether a line of FILE contains TEXT (false if FILE is missing).
file_has() {
    local line
    { while IFS= read -r line || [[ -n "$line" ]]; do
        [[ "$line" == *"$2"* ]] && return 0
    done < "$1"; } 2>/dev/null || true
    return 1
}
# pause SECONDS: sleep in the shell itself (read with a timeout on a FIFO nobody writes to).
pause() {
    if [[ -z "${PAUSE_FD:-}" ]]; then
        # the first call in a shell makes the FIFO; a subshell started after it shares it (nobody writes to it)
        mkfifo "$WORK/pause.$BASHPID"
        exec {PAUSE_FD}<> "$WORK/pause.$BASHPID"
    fi
    read -r -t "$1" -u "$PAUSE_FD" _ || true
}
# The same figures printed, for one-off reads: threads, descriptors and resident KiB of PID (0 once it has ended).
server_threads() { local n; count_into n "/proc/$1/task"; echo "$n"; }
server_fds() { local n; count_into n "/proc/$1/fd"; echo "$n"; }
server_rss_kib() { local n; rss_into n "$1"; echo "$n"; }
# CPU time of a process (user + system, all threads), in milliseconds; 0 when it has ended
process_cpu_ms() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat" 2>/dev/null || echo 0
}
# server_live_heap_kib PID: the JVM's heap in use after a full GC (young and old generations), in KiB, or null where
# jcmd cannot tell
server_live_heap_kib() {
    local jcmd kib
    jcmd="$(dirname "$JAVA")/jcmd"
    [[ -x "$jcmd" ]] || jcmd=jcmd
    "$jcmd" "$1" GC.run > /dev/null 2>&1 || true
    kib="$("$jcmd" "$1" GC.heap_info 2>/dev/null | awk '/used [0-9]+K/ { for (i = 1; i <= NF; i++)
        if ($i == "used") { v = $(i + 1); sub(/K.*/, "", v); if ($1 ~ /^(PSYoungGen|ParOldGen|def|tenured)/) total += v } }
        END { print (total == "" ? "null" : total + 0) }')"
    [[ "$kib" =~ ^[0-9]+$ ]] && echo "$kib" || echo null
}
