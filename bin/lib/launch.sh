# Shared by bin/servercomm, bin/clientcomm, bin/kv-server, bin/kv-client, bin/demo, bin/aot, bench/startup and
# bench/baseline (bench/compare, bench/lib-run.sh take pick_java and java_major); sourced, not run.
# launch MODULE MAIN_CLASS ARGS... runs MAIN_CLASS from MODULE's build in this repository, on the JDK pick_java picks.

rdmacomm_root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"

launch() {
    local module="$1" main="$2"
    shift 2
    local target="$rdmacomm_root/$module/target"
    local jar
    jar="$(find "$target" -maxdepth 1 -name "$module-*.jar" ! -name '*-sources.jar' ! -name '*-tests.jar' \
        2>/dev/null | head -n 1 || true)"
    local java
    java="$(pick_java)"
    if ! command -v "$java" >/dev/null 2>&1; then
        echo "$module: no java found (looked for '$java'); install a JDK 17 or newer (25 recommended), or set" \
            "JAVA_HOME" >&2
        exit 1
    fi
    if [[ -z "$jar" || ! -d "$target/lib" ]]; then
        # with the JDK that will run it: on JDK 22+ the build includes ucx-ffm (profile jdk22-ffm)
        echo "$module: not built yet; build it first with: (cd $rdmacomm_root && JAVA_HOME=$(java_home "$java")" \
            "./mvnw -q -DskipTests package)" >&2
        exit 1
    fi

    local -a opts=()
    if [[ -n "${JAVA_OPTS:-}" ]]; then
        read -r -a opts <<<"$JAVA_OPTS"
    fi
    local version major
    version="$(java_version "$java")"
    major="$(major_of "$version")"
    [[ "$major" =~ ^[0-9]+$ ]] || major=0
    # JDK 22+ warns about (and will one day refuse) native access that is not enabled explicitly.
    if (( major >= 22 )); then
        opts+=(--enable-native-access=ALL-UNNAMED)
        # built by a JDK before 22, run by a later one: ucx-ffm (profile jdk22-ffm) is not in the build, and
        # rdma:// says so once, with this command to rebuild (RdmaCommunicatorProvider's notice)
        if [[ -n "$(find "$target/lib" -maxdepth 1 -name 'transport-rdma-*.jar' -print -quit)" ]] \
                && ! compgen -G "$target/lib/transport-rdma-ucx-ffm-*.jar" >/dev/null; then
            local rebuild="(cd $rdmacomm_root && JAVA_HOME=$(java_home "$java") ./mvnw -q -DskipTests package)"
            opts+=("-Drdmacomm.rebuild=$rebuild")
        fi
    fi
    # JDK 24+ warns on stderr at the first sun.misc.Unsafe memory access (protobuf and gRPC's Netty in kv-server and
    # kv-client); the option exists from JDK 23.
    if (( major >= 23 )); then
        opts+=(--sun-misc-unsafe-memory-access=allow)
    fi
    # JDK 25+: the AOT cache bin/aot recorded for this module and this JDK (aot_cache says when); what the JVM has to
    # say about it goes to stderr, and only if something is wrong (its default is stdout, the tools' output)
    local cache
    if (( major >= 25 )) && cache="$(aot_cache "$module" "$java" "$version")"; then
        opts+=("-XX:AOTCache=$cache" "-Xlog:aot*=off" "-Xlog:aot*=warning:stderr")
    fi
    # DiSNI (rdma://...?provider=verbs) reads direct buffers' addresses through sun.nio.ch.DirectBuffer.
    opts+=(--add-exports java.base/sun.nio.ch=ALL-UNNAMED)
    # UCX must not install its own SIGSEGV handler inside the JVM, which uses SIGSEGV itself.
    export UCX_ERROR_SIGNALS=""
    # UCX logs to stdout, which is the tools' output; the Java side reports every failure itself.
    export UCX_LOG_LEVEL="${UCX_LOG_LEVEL:-fatal}"
    exec "$java" "${opts[@]}" -cp "$jar:$target/lib/*" "$main" "$@"
}

# The version of a java binary (e.g. 25.0.3): from its home's release file when there is one (no JVM start),
# else from `java -version`.
java_version() {
    local java="$1" home version=""
    home="$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")"
    if [[ -r "$home/release" ]]; then
        version="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")"
    fi
    if [[ -z "$version" ]]; then
        version="$("$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)"
    fi
    echo "$version"
}

# The feature release of a version (25 of 25.0.3, 8 of 1.8.0_402).
major_of() {
    local version="${1#1.}"
    echo "${version%%[!0-9]*}"
}

# The feature release of a java binary (e.g. 25).
java_major() {
    major_of "$(java_version "$1")"
}

# aot_cache_path MODULE JAVA [VERSION]: where bin/aot puts MODULE's AOT cache for that JDK (VERSION: its
# java_version, when the caller has it): its version and a checksum of its home in the name, since a cache serves only
# the JDK that made it.
aot_cache_path() {
    local sum
    sum="$(java_home "$2" | cksum | cut -d' ' -f1)"
    echo "$rdmacomm_root/$1/target/aot/$1-jdk${3:-$(java_version "$2")}-$sum.aot"
}

# aot_cache MODULE JAVA [VERSION] (a JDK 25 or later): prints MODULE's AOT cache and succeeds when the launcher should use it:
# RDMACOMM_AOT is not 0; JAVA_OPTS is empty (the cache was recorded without: options of one's own, such as -Xshare,
# another archive, --add-opens or another garbage collector, can make the JVM refuse the cache or fail to start);
# bin/aot recorded one for this JDK; and no jar of MODULE's build is newer than it (a rebuild makes it stale).
aot_cache() {
    local module="$1" java="$2" cache
    [[ "${RDMACOMM_AOT:-1}" != 0 && -z "${JAVA_OPTS:-}" ]] || return 1
    cache="$(aot_cache_path "$module" "$java" "${3:-}")"
    [[ -f "$cache" ]] || return 1
    local newer
    newer="$(find "$rdmacomm_root/$module/target" -maxdepth 2 -name '*.jar' -newer "$cache" -print -quit)"
    [[ -z "$newer" ]] || return 1
    echo "$cache"
}

# The java the tools run on: $JAVA_HOME/bin/java when JAVA_HOME is set; else the newest JDK of 22 or later
# (ucx-ffm, the fast provider of rdma://, needs java.lang.foreign) among java on the PATH and the JDKs installed in
# the usual places; else java on the PATH. bin/test and ./mvnw do not use it: they run on JAVA_HOME or the PATH's java.
pick_java() {
    if [[ -n "${JAVA_HOME:-}" ]]; then
        echo "$JAVA_HOME/bin/java"
        return
    fi
    local best="java" best_major=0 home major
    if command -v java >/dev/null 2>&1; then
        best_major="$(java_major java)"
        [[ "$best_major" =~ ^[0-9]+$ ]] || best_major=0
    fi
    for home in /usr/lib/jvm/* /usr/local/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* /opt/*/jdk* \
            "${HOME:-/nonexistent}"/.sdkman/candidates/java/* "${HOME:-/nonexistent}"/.jdks/* \
            "${HOME:-/nonexistent}"/.local/share/mise/installs/java/* "${HOME:-/nonexistent}"/.asdf/installs/java/*; do
        # JDKs only (the release file names the version without starting a JVM)
        [[ -x "$home/bin/java" && -r "$home/release" ]] || continue
        major="$(java_major "$home/bin/java")"
        if [[ "$major" =~ ^[0-9]+$ ]] && (( major >= 22 && major > best_major )); then
            best="$home/bin/java" best_major="$major"
        fi
    done
    echo "$best"
}

# Whether UCX's libucp (Debian: libucx0), which rdma:// needs, is installed.
have_libucp() {
    { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null || true; } | grep -q 'libucp\.so\.0 '
}

# The home of a java binary (the directory above its bin/).
java_home() {
    dirname "$(dirname "$(readlink -f "$(command -v "$1")")")"
}

# await_listening FILE PID [COUNT] [SECONDS]: waits until FILE (a servercomm's standard output) holds COUNT (1) lines
# starting with 'listening ', while process PID lives and for at most SECONDS (60). Returns 0 then, 1 if PID ended
# first, 2 if the time ran out; prints nothing.
await_listening() {
    local file="$1" pid="$2" count="${3:-1}" deadline=$((SECONDS + ${4:-60})) n
    while :; do
        n="$(grep -c '^listening ' "$file" 2>/dev/null || true)"
        (( ${n:-0} >= count )) && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        (( SECONDS < deadline )) || return 2
        sleep 0.1
    done
}
