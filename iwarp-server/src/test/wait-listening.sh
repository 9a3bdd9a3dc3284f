# Sourced by the scripts that start `serve` as a process (run-jar-*.sh, interop/siw-matrix.sh).
# wait_listening PID LOG WHO: waits up to 20 s for serve's "listening on" line in LOG; if the process
# dies first or the line never comes, prints LOG and exits 1 with "WHO: serve died / did not start".
wait_listening() {
    local pid=$1 log=$2 who=$3 i
    for i in $(seq 1 100); do
        grep -q "listening on" "$log" && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "$who: serve died" >&2; exit 1; }
        sleep 0.2
    done
    cat "$log"; echo "$who: serve did not start" >&2; exit 1
}

# start_serve WHO JAR PORT [serve options...]: the run-jar scripts' common start. Checks that JAR exists
# (exit 2 if not), starts `java -jar JAR serve OPTIONS --address 127.0.0.1 --port PORT` with its stderr in a
# new temporary file, sets `serve` (its PID) and `log` (that file), kills serve and removes the file on
# exit, and waits until it listens (wait_listening).
start_serve() {
    local who=$1 jar=$2 port=$3
    shift 3
    [ -f "$jar" ] || { echo "$who: no jar at $jar (run mvn package first)" >&2; exit 2; }
    log="$(mktemp)"
    java -jar "$jar" serve "$@" --address 127.0.0.1 --port "$port" 2>"$log" &
    serve=$!
    trap 'kill -9 $serve 2>/dev/null || true; rm -f "$log"' EXIT
    wait_listening $serve "$log" "$who"
}
