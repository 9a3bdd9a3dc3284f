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
