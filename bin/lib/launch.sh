# Shared by bin/servercomm, bin/clientcomm and bench/baseline (bench/compare takes java_major); sourced, not run.
# launch MODULE MAIN_CLASS ARGS... runs MAIN_CLASS from MODULE's build in this repository.

rdmacomm_root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"

launch() {
    local module="$1" main="$2"
    shift 2
    local target="$rdmacomm_root/$module/target"
    local jar
    jar="$(find "$target" -maxdepth 1 -name "$module-*.jar" ! -name '*-sources.jar' ! -name '*-tests.jar' \
        2>/dev/null | head -n 1 || true)"
    if [[ -z "$jar" || ! -d "$target/lib" ]]; then
        echo "$module: not built yet; build it first with: (cd $rdmacomm_root && ./mvnw -q -DskipTests package)" >&2
        exit 1
    fi

    local java="java"
    if [[ -n "${JAVA_HOME:-}" ]]; then
        java="$JAVA_HOME/bin/java"
    fi
    if ! command -v "$java" >/dev/null 2>&1; then
        echo "$module: no java found (looked for '$java'); install a JDK 17 or newer, or set JAVA_HOME" >&2
        exit 1
    fi

    local -a opts=()
    if [[ -n "${JAVA_OPTS:-}" ]]; then
        read -r -a opts <<<"$JAVA_OPTS"
    fi
    # JDK 22+ warns about (and will one day refuse) native access that is not enabled explicitly.
    if (( $(java_major "$java") >= 22 )); then
        opts+=(--enable-native-access=ALL-UNNAMED)
    fi
    # JDK 24+ warns on stderr at the first sun.misc.Unsafe memory access (protobuf and gRPC's Netty in kv-server and
    # kv-client); the option exists from JDK 23.
    if (( $(java_major "$java") >= 23 )); then
        opts+=(--sun-misc-unsafe-memory-access=allow)
    fi
    # DiSNI (rdma://...?provider=verbs) reads direct buffers' addresses through sun.nio.ch.DirectBuffer.
    opts+=(--add-exports java.base/sun.nio.ch=ALL-UNNAMED)
    # UCX must not install its own SIGSEGV handler inside the JVM, which uses SIGSEGV itself.
    export UCX_ERROR_SIGNALS=""
    # UCX logs to stdout, which is the tools' output; the Java side reports every failure itself.
    export UCX_LOG_LEVEL="${UCX_LOG_LEVEL:-fatal}"
    exec "$java" "${opts[@]}" -cp "$jar:$target/lib/*" "$main" "$@"
}

# The feature release of a java binary: from its home's release file when there is one (no JVM start),
# else from `java -version`.
java_major() {
    local java="$1" home version=""
    home="$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")"
    if [[ -r "$home/release" ]]; then
        version="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")"
    fi
    if [[ -z "$version" ]]; then
        version="$("$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)"
    fi
    version="${version#1.}"
    echo "${version%%[!0-9]*}"
}
