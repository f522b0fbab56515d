# Shared by the benchmark drivers (and the views soak): free ports, ucx_perftest
# as JSON, fields of a point, and where the points are saved and summarized.

# free_port: a TCP port nobody listens on, in 20000-31999: below Linux's
# ephemeral range (32768-60999), where outgoing connections and ports picked
# by the kernel would otherwise collide with a random choice
free_port() {
    local p
    while :; do
        p=$(( (RANDOM % 12000) + 20000 ))
        [ -n "$(ss -Hltn "sport = :$p" 2>/dev/null)" ] || { echo "$p"; return; }
    done
}

# Run a UCX ucx_perftest shape as a server/client pair on localhost, pinned
# to different cores, and print one JSON object from its "Final:" line.
#   perftest_json SHAPE TLS SIZE ITERS
perftest_json() {
    local shape=$1 tls=$2 size=$3 iters=$4 port final
    port=$(free_port)
    UCX_TLS=$tls taskset -c 0 ucx_perftest -p "$port" >/dev/null 2>&1 &
    local server=$!
    sleep 0.5
    final=$(UCX_TLS=$tls taskset -c 1 timeout 120 ucx_perftest localhost -p "$port" \
                -t "$shape" -s "$size" -n "$iters" 2>/dev/null | sed -n 's/^Final: *//p')
    wait "$server" 2>/dev/null || true
    [ -n "$final" ] || { echo "{\"shape\":\"$shape\",\"error\":\"ucx_perftest failed\"}"; return 1; }
    # columns: iterations p50 avg overall(us) MB/s(avg overall) msg/s(avg overall)
    set -- $final
    printf '{"shape":"%s","transport":"%s","payload_bytes":%s,"iterations":%s,"lat_p50_us":%s,"lat_avg_us":%s,"MB/s":%s,"msg_rate":%s}\n' \
        "$shape" "$tls" "$size" "$1" "$2" "$3" "$5" "$7"
}

# json_field JSON NAME: the numeric value of one field
json_field() {
    sed -n "s/.*\"$2\":\\([0-9.eE+-]*\\).*/\\1/p" <<<"$1"
}

# emit POINT: the JSON objects on stdin, tagged with "point" POINT and
# "round" $r, appended to $jsonl (the drivers of interleaved rounds set both)
emit() {
    sed -n "s/^{/{\"point\":\"$1\",\"round\":$r,/p" | tee -a "$jsonl" >/dev/null
}

# The drivers that save their points and summarize them, then or later with
# --summary JSONL (group_members.sh, mailbox_scale.sh, write_lane.sh), define
# summarize JSONL (their summary of saved points, on stdout) and use:
#
# results_summary_only JSONL: given a file (--summary), its summary, and the
# driver ends there; given "", nothing
results_summary_only() {
    [ -n "$1" ] || return 0
    summarize "$1"
    exit 0
}

# results_open DIR FILE: results=DIR (made) and out=DIR/FILE (emptied), the
# file the driver appends its points to
results_open() {
    results=$1 out=$1/$2
    mkdir -p "$results"
    : > "$out"
}

# results_close [FILE]: the summary of $out on stdout, and in $results/FILE
# shellcheck disable=SC2120  # FILE is optional
results_close() {
    if [ $# -gt 0 ]; then
        summarize "$out" | tee "$results/$1"
    else
        summarize "$out"
    fi
}
