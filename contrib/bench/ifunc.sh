#!/usr/bin/env bash
#
# Two-Chains ifunc shapes next to UCX's own, in one run, with ucx_perftest
# (the patched one from contrib/ucx_perftest: `make perftest`):
#
#  1. sweep: payloads of 1 ... 1024 integers (4 B each) over posix,self and
#     tcp,self: ucp_put_lat (at the payload and at the Local frame size),
#     ucp_am_lat, ucp_put_bw, ucp_am_bw, and ucp_ifunc_lat / ucp_ifunc_bw in
#     Local, Injected and Cached mode and through the public API (mode
#     "public": UCX_TC_IFUNC_API=public, Injected frames; in the JSON rows,
#     not yet in the plots and ratios). p50 and p99.9 are those of the last
#     2048 iterations of a run (the patched perftest prints both with -I);
#  2. tail latency: p50 and p99.9 with and without a memory-stress
#     neighbour (stress-ng --vm, niced, unpinned: the 2 cores are taken by
#     the pair), posix,self, 64-byte payload;
#  3. wait-policy cost: ucp_ifunc_lat Local with UCX_TC_WAIT_POLICY adaptive (the default), busy,
#     pause, wfe (its fallback named) and sleep: latency and CPU seconds,
#     and cycles from perf stat where the machine counts them.
#
# Every pair runs pinned (server core 0, client core 1); every point is
# repeated REPS times with the whole sweep interleaved (A B C ... A B C ...)
# and the summary uses medians. One JSON object per measured point (per
# repetition) in contrib/bench/results/ifunc/full/ifunc.jsonl (quick/ with
# --quick), plots ifunc*_{latency,msgrate,tail,policy}.png, ratios in
# ifunc*_summary.txt and on stdout.
#
#   contrib/bench/ifunc.sh [--quick]        # --quick: < 2 minutes
#   TC_IFUNC_SECTIONS="policy profile" contrib/bench/ifunc.sh   # redo some
#       sections (sweep tail policy signal profile), keeping the others' rows
#
# JSON fields: shape, mode, jam, transport, payload_bytes, frame_bytes,
# lat_avg_us, lat_p50_us, lat_p999_us, msg_rate, MB/s, cpu_s (user+sys of
# both processes, whole run), wall_s (client), and section, rep, iters,
# policy, stress, retries, cycles.
#
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${TC_BUILD:-$top/build}
perftest=${TC_PERFTEST:-$build/contrib/ucx_perftest/ucx_perftest}
out=${TC_BENCH_OUT:-}
jam=${UCX_TC_IFUNC_JAM:-indirect_put}

quick=0
case "${1:-}" in
--quick) quick=1 ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

if [ "$quick" = 1 ]; then
    variant=quick prefix=ifunc reps=1 ints="1 16 1024" tail_reps=1 pol_reps=1
    lat_n=10000 tcp_lat_n=1000 bw_n=100000 tcp_bw_n=5000 tail_n=20000
    pol_n=500000 pol_sleep_n=10000 pol_tcp_n=5000 prof_n=1000000
else
    variant=full prefix=ifunc reps=7 ints="1 4 16 256 1024" tail_reps=5 pol_reps=3
    lat_n=20000 tcp_lat_n=2000 bw_n=200000 tcp_bw_n=20000 tail_n=100000
    pol_n=2000000 pol_sleep_n=40000 pol_tcp_n=20000 prof_n=2000000
fi

out=${out:-$here/results/ifunc/$variant}
[ -x "$perftest" ] || { echo "ifunc.sh: no $perftest; run 'make perftest' first" >&2; exit 1; }
usage=$("$perftest" -h 2>&1 || true)
grep -q ucp_ifunc_lat <<<"$usage" || { echo "ifunc.sh: $perftest has no ifunc shapes" >&2; exit 1; }
command -v stress-ng >/dev/null || { echo "ifunc.sh: stress-ng missing (Debian: stress-ng)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "ifunc.sh: gnuplot missing (Debian: gnuplot-nox)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "ifunc.sh: needs 2 cores to pin the pair" >&2; exit 1; }

sections=${TC_IFUNC_SECTIONS:-sweep tail policy signal profile}
want() { [[ " $sections " == *" $1 "* ]]; }
mkdir -p "$out"
jsonl=$out/$prefix.jsonl
if [ -z "${TC_IFUNC_SECTIONS:-}" ] || [ ! -f "$jsonl" ]; then
    : >"$jsonl"
else
    # keep the rows of the sections not redone
    for sec in $sections; do
        grep -v "^{\"section\":\"$sec\"" "$jsonl" >"$jsonl.tmp" || true
        mv "$jsonl.tmp" "$jsonl"
    done
fi
work=$(mktemp -d /tmp/tc-ifunc-bench.XXXXXX)
stress_pid=
cleanup() {
    [ -z "$stress_pid" ] || kill "$stress_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# cycles from perf stat, where this machine counts them
cycles_note="perf stat -e cycles: not supported here"
perf_cycles=0
if command -v perf >/dev/null; then
    pc=$(perf stat -x, -e cycles true 2>&1 >/dev/null | grep cycles || true)
    case "$pc" in
    *"not supported"*|*"not counted"*|"") cycles_note="perf stat -e cycles: '<not supported>' (no PMU in this VM); CPU seconds from getrusage only" ;;
    *) perf_cycles=1 cycles_note="perf stat -e cycles: supported" ;;
    esac
else
    cycles_note="perf not installed (Debian: linux-perf); CPU seconds from getrusage only"
fi

echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), pair pinned to cores 0/1," \
     "$reps interleaved repetitions, jam $jam, $perftest" >&2
echo "# $cycles_note" >&2

# shellcheck source=contrib/bench/perftest_lib.sh
source "$here/perftest_lib.sh"   # free_port

# frame size of a Local frame: compact (the default check signal), a 40-byte
# header and the payload, 8-aligned (ucx_ext/ifunc/wire/frame.h)
local_frame() { echo $(( (40 + $1 + 7) / 8 * 8 )); }

# one_run TLS SHAPE SIZE ITERS PCT [VAR=VALUE...]: sets run_line (the client's
# final line), run_cpu, run_wall, run_cycles, run_err
one_run() {
    local tls=$1 shape=$2 size=$3 iters=$4 pct=$5 port i spid src=0 crc=0
    shift 5
    port=$(free_port)
    run_line= run_cpu= run_wall= run_cycles=null run_err=
    ( TIMEFORMAT='%3U %3S %3R'
      time env UCX_TLS="$tls" "$@" taskset -c 0 timeout 60 "$perftest" -p "$port" \
          >"$work/slog" 2>&1 ) 2>"$work/ts" &
    spid=$!
    for i in $(seq 500); do
        [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
        sleep 0.01
    done
    local client=(taskset -c 1 timeout 60 "$perftest" localhost -p "$port" -t "$shape"
                  -s "$size" -n "$iters" -R "$pct" -f -I)
    if [ "$perf_cycles" = 1 ]; then
        client=(perf stat -x, -e cycles -o "$work/pstat" "${client[@]}")
    fi
    ( TIMEFORMAT='%3U %3S %3R'
      time env UCX_TLS="$tls" "$@" "${client[@]}" >"$work/clog" 2>&1 ) 2>"$work/tc" || crc=$?
    wait "$spid" || src=$?
    run_line=$(grep -E '^ *[0-9]+ +[0-9.]+ ' "$work/clog" | tail -1 || true)
    if [ "$crc" != 0 ] || [ "$src" != 0 ] || [ -z "$run_line" ] ||
       grep -qE 'UCX +(ERROR|WARN)|rejected|waited' "$work/slog" "$work/clog"; then
        run_err=$(grep -hE 'UCX +(ERROR|WARN|FATAL)|rejected|waited|rror' "$work/slog" "$work/clog" |
                  head -2 | sed 's/.*UCX  *//' | tr '"\n' "' " | cut -c1-200)
        [ -n "$run_err" ] || run_err="exit $crc/$src"
        return 1
    fi
    run_cpu=$(awk 'NR==FNR { u += $1 + $2; next } { u += $1 + $2 } END { printf "%.3f", u }' \
              <(tail -1 "$work/ts") <(tail -1 "$work/tc"))
    run_wall=$(tail -1 "$work/tc" | awk '{ print $3 }')
    if [ "$perf_cycles" = 1 ]; then
        run_cycles=$(awk -F, '/cycles/ { print $1 + 0 }' "$work/pstat" | head -1)
    fi
    return 0
}

# point SECTION REP TLS SHAPE MODE PAYLOAD SIZE ITERS LAT [VAR=VALUE...]:
# runs it, retrying a run the mailbox spoiled (see the summary), and appends
# one JSON object
point() {
    local section=$1 rep=$2 tls=$3 shape=$4 mode=$5 payload=$6 size=$7 iters=$8 lat=$9
    shift 9
    local env=("$@") retries=0 p50 p999=null a b f err= cpu wall cycles frame extra j wait_mech=
    if [ "$mode" = public ]; then   # the public API: Injected frames, no mailbox
        env+=(UCX_TC_IFUNC_API=public UCX_TC_IFUNC_JAM="$jam" UCX_TC_IFUNC_TIMEOUT=5s)
    elif [ "$mode" != null ]; then
        env+=(UCX_TC_IFUNC_MODE="$mode" UCX_TC_IFUNC_JAM="$jam" UCX_TC_IFUNC_TIMEOUT=5s)
    fi
    for a in 1 2 3 4; do
        if one_run "$tls" "$shape" "$size" "$iters" 50 "${env[@]}"; then err=; break; fi
        err=$run_err; retries=$a
    done
    if [ -z "$err" ]; then
        # shellcheck disable=SC2086
        set -- $run_line
        p50=$2 b=("$4" "$6" "$8") cpu=$run_cpu wall=$run_wall cycles=$run_cycles
        extra=$(sed 's/^ *\([0-9.]* *\)\{8\}//' <<<"$run_line")
        frame=$(sed -n 's/.* \([0-9][0-9]*\)-byte frames.*/\1/p' <<<"$extra")
        wait_mech=$(sed -n 's/.*, wait \([^;]*\);.*/\1/p' <<<"$extra")
        [ -n "$frame" ] || frame=$size
        # p50 and p99.9 of the same samples (the patched perftest's -I)
        p50=$(sed -n 's/.*p50 \([0-9.]*\) p99.9 \([0-9.]*\) us.*/\1/p' <<<"$extra")
        p999=$(sed -n 's/.*p50 \([0-9.]*\) p99.9 \([0-9.]*\) us.*/\2/p' <<<"$extra")
        [ "$lat" = 1 ] || p999=null
        j=$(printf '{"section":"%s","rep":%s,"shape":"%s","mode":%s,"jam":%s,"transport":"%s","payload_bytes":%s,"frame_bytes":%s,"iters":%s,"lat_avg_us":%s,"lat_p50_us":%s,"lat_p999_us":%s,"msg_rate":%s,"MB/s":%s,"cpu_s":%s,"wall_s":%s,"cycles":%s,"retries":%s' \
            "$section" "$rep" "$shape" "$(q "$mode")" "$( [ "$mode" = null ] && echo null || q "$jam")" \
            "$tls" "$payload" "$frame" "$iters" "$(num "${b[0]}")" "$(num "$p50")" "$(num "$p999")" \
            "$(num "${b[2]}")" "$(num "${b[1]}")" \
            "$cpu" "$wall" "${cycles:-null}" "$retries")
    else
        j=$(printf '{"section":"%s","rep":%s,"shape":"%s","mode":%s,"transport":"%s","payload_bytes":%s,"error":"%s","retries":%s' \
            "$section" "$rep" "$shape" "$(q "$mode")" "$tls" "$payload" "$err" "$retries")
    fi
    [ -z "${wait_mech:-}" ] || [ -n "$err" ] || j="$j,\"wait\":\"$wait_mech\""
    wait_mech=
    for a in "${extra_fields[@]}"; do j="$j,$a"; done
    echo "$j}" | tee -a "$jsonl"
}
q() { [ "$1" = null ] && echo null || echo "\"$1\""; }
# a JSON number, or null for what JSON has none of (perftest prints inf and
# nan for rates of a 1-iteration run)
num() { [[ "$1" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] && echo "$1" || echo null; }
extra_fields=()

t0=$(date +%s)

# --- 1. the sweep ---------------------------------------------------------
want sweep &&
for rep in $(seq "$reps"); do
    for tls in posix,self tcp,self; do
        if [ "$tls" = posix,self ]; then ln=$lat_n bn=$bw_n; else ln=$tcp_lat_n bn=$tcp_bw_n; fi
        for n in $ints; do
            s=$((4 * n))
            fr=$(local_frame "$s")
            extra_fields=("\"sized_as\":\"payload\"")
            point sweep "$rep" "$tls" ucp_put_lat null "$s" "$s" "$ln" 1
            point sweep "$rep" "$tls" ucp_am_lat null "$s" "$s" "$ln" 1
            for m in local injected cached public; do
                point sweep "$rep" "$tls" ucp_ifunc_lat "$m" "$s" "$s" "$ln" 1
            done
            point sweep "$rep" "$tls" ucp_put_bw null "$s" "$s" "$bn" 0
            point sweep "$rep" "$tls" ucp_am_bw null "$s" "$s" "$bn" 0
            for m in local injected cached public; do
                point sweep "$rep" "$tls" ucp_ifunc_bw "$m" "$s" "$s" "$bn" 0
            done
            extra_fields=("\"sized_as\":\"local_frame\"")
            point sweep "$rep" "$tls" ucp_put_lat null "$s" "$fr" "$ln" 1
            point sweep "$rep" "$tls" ucp_put_bw null "$s" "$fr" "$bn" 0
        done
    done
done
echo "# sweep done in $(( $(date +%s) - t0 )) s" >&2

# --- 2. tail latency with and without a memory-stress neighbour -----------
s=64
fr=$(local_frame $s)
want tail &&
for rep in $(seq "$tail_reps"); do
    for stress in off on; do
        if [ "$stress" = on ]; then
            nice -n 19 stress-ng --vm 1 --vm-bytes 512M --vm-keep --timeout 600 --quiet &
            stress_pid=$!
            sleep 0.5
        fi
        extra_fields=("\"stress\":\"$stress\"")
        for m in local injected cached; do
            point tail "$rep" posix,self ucp_ifunc_lat "$m" $s $s "$tail_n" 1
        done
        extra_fields=("\"stress\":\"$stress\"" "\"sized_as\":\"local_frame\"")
        point tail "$rep" posix,self ucp_put_lat null $s "$fr" "$tail_n" 1
        extra_fields=("\"stress\":\"$stress\"")
        point tail "$rep" posix,self ucp_am_lat null $s $s "$tail_n" 1
        if [ -n "$stress_pid" ]; then
            kill "$stress_pid" 2>/dev/null || true
            wait "$stress_pid" 2>/dev/null || true
            stress_pid=
        fi
    done
done
echo "# tail done at $(( $(date +%s) - t0 )) s" >&2

# --- 3. wait-policy cost ---------------------------------------------------
# The default signal. Over posix a reply comes back within a microsecond, so
# every policy mostly spins; over tcp each side waits ~5-20 us per message,
# which is where the policies differ.
want policy &&
for rep in $(seq "$pol_reps"); do
    for tls in posix,self tcp,self; do
        for pol in adaptive busy pause wfe sleep; do
            n=$pol_n
            [ "$pol" = sleep ] && n=$pol_sleep_n
            [ "$tls" = tcp,self ] && n=$pol_tcp_n
            extra_fields=("\"policy\":\"$pol\"")
            point policy "$rep" "$tls" ucp_ifunc_lat local $s $s "$n" 0 \
                UCX_TC_WAIT_POLICY=$pol
            # the same pair doing (almost) nothing: its start-up and teardown CPU
            extra_fields=("\"policy\":\"$pol\"" "\"baseline\":1")
            point policy "$rep" "$tls" ucp_ifunc_lat local $s $s 1 0 \
                UCX_TC_WAIT_POLICY=$pol
        done
    done
done
echo "# policies done at $(( $(date +%s) - t0 )) s" >&2

# --- 4. the signals: compact frames with a check word (the default), the
# full frame fenced (the fallback), the paper's single put with a trailer ---
want signal &&
for rep in $(seq "$reps"); do
    for p in 4 64; do
        for sig in check fence trailer; do
            extra_fields=("\"signal\":\"$sig\"")
            point signal "$rep" posix,self ucp_ifunc_lat local $p $p "$lat_n" 1 UCX_TC_IFUNC_SIGNAL=$sig
            point signal "$rep" posix,self ucp_ifunc_bw local $p $p "$bw_n" 0 UCX_TC_IFUNC_SIGNAL=$sig
        done
    done
done

# --- 5. where the time goes (perf record, software clock) -----------------
profile=$out/${prefix}_profile.txt
if ! want profile; then
    :
elif command -v perf >/dev/null && perf record -e cpu-clock -o "$work/probe.data" true >/dev/null 2>&1; then
    : >"$profile"
    # steady state only (--delay skips start-up); a failed run is repeated
    for cfg in "ucp_ifunc_lat 4 local" "ucp_put_lat 192 null" "ucp_am_lat 4 null"; do
        set -- $cfg
        envs=(UCX_TLS=posix,self)
        [ "$3" = null ] || envs+=(UCX_TC_IFUNC_MODE="$3" UCX_TC_IFUNC_JAM="$jam" UCX_TC_IFUNC_TIMEOUT=5s)
        for a in 1 2 3 4; do
            port=$(free_port)
            env "${envs[@]}" taskset -c 0 timeout 60 "$perftest" -p "$port" >/dev/null 2>&1 &
            spid=$!
            for i in $(seq 500); do [ -n "$(ss -Hltn "sport = :$port")" ] && break; sleep 0.01; done
            prc=0
            env "${envs[@]}" perf record -q -e cpu-clock -F 20000 --delay 300 -o "$work/perf.data" -- \
                taskset -c 1 timeout 60 "$perftest" localhost -p "$port" -t "$1" -s "$2" \
                -n "$prof_n" -f >/dev/null 2>&1 || prc=$?
            wait "$spid" 2>/dev/null && [ "$prc" = 0 ] && break
        done
        {
            echo "=== client of $1 -s $2 ${3/null/} (posix,self), $prof_n iterations: perf record -e cpu-clock after 300 ms, self time by symbol"
            perf report -i "$work/perf.data" --stdio --no-children --sort dso,symbol 2>/dev/null |
                grep -E '^ +[0-9]' | head -25 || true
            echo
        } >>"$profile"
    done
    echo "# profiles in $profile" >&2
else
    echo "perf record -e cpu-clock does not work here" >"$profile"
fi

# --- summary and plots -----------------------------------------------------
python3 - "$jsonl" "$out" "$prefix" "$cycles_note" <<'PY'
import json, statistics, sys
path, out, prefix, cycles_note = sys.argv[1:5]
rows = [json.loads(l) for l in open(path) if l.startswith('{')]
ok = [r for r in rows if 'error' not in r]
bad = [r for r in rows if 'error' in r]
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float('nan')
def sel(section, **kw):
    return [r for r in ok if r['section'] == section and
            all(r.get(k) == v for k, v in kw.items())]
def m(section, field, **kw):
    return med([r[field] for r in sel(section, **kw)])
def ratio(a, b):
    return a / b if b and b == b and a == a else float('nan')

lines = []
def say(s=''):
    lines.append(s); print(s)

payloads = sorted({r['payload_bytes'] for r in sel('sweep')})
say(f"# Two-Chains ifunc shapes vs UCX, medians of {max([r['rep'] for r in ok] + [0])} "
    f"interleaved repetitions; jam {next((r['jam'] for r in ok if r.get('jam')), '?')}")
for tls in ('posix,self', 'tcp,self'):
    say(f"\n## {tls}: latency (one way, avg us) and message rate")
    say("| payload B | frame B (L/I/C) | put_lat(frame) | am_lat | Local | Injected | Cached | "
        "L/put(frame) | L/am | I/L | C/L | am_bw msg/s | ifunc_bw L msg/s | bw L/am | I/L bw | C/L bw |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in payloads:
        k = dict(transport=tls, payload_bytes=p)
        L = m('sweep', 'lat_avg_us', shape='ucp_ifunc_lat', mode='local', **k)
        I = m('sweep', 'lat_avg_us', shape='ucp_ifunc_lat', mode='injected', **k)
        C = m('sweep', 'lat_avg_us', shape='ucp_ifunc_lat', mode='cached', **k)
        P = m('sweep', 'lat_avg_us', shape='ucp_put_lat', sized_as='local_frame', **k)
        A = m('sweep', 'lat_avg_us', shape='ucp_am_lat', **k)
        fr = [m('sweep', 'frame_bytes', shape='ucp_ifunc_lat', mode=x, **k) for x in ('local', 'injected', 'cached')]
        amb = m('sweep', 'msg_rate', shape='ucp_am_bw', **k)
        bL = m('sweep', 'msg_rate', shape='ucp_ifunc_bw', mode='local', **k)
        bI = m('sweep', 'msg_rate', shape='ucp_ifunc_bw', mode='injected', **k)
        bC = m('sweep', 'msg_rate', shape='ucp_ifunc_bw', mode='cached', **k)
        say(f"| {p} | {'/'.join('%.0f' % f for f in fr)} | {P:.3f} | {A:.3f} | {L:.3f} | {I:.3f} | {C:.3f} | "
            f"{ratio(L,P):.2f} | {ratio(L,A):.2f} | {ratio(I,L):.2f} | {ratio(C,L):.2f} | "
            f"{amb:,.0f} | {bL:,.0f} | {ratio(bL,amb):.2f} | {ratio(bI,bL):.2f} | {ratio(bC,bL):.2f} |")

say("\n## targets (posix,self): the median over rounds of each round's ratio (p50 for latency)")
def per_round(section, field, a, b):
    """median over reps of a/b, a and b selectors of one point each per rep"""
    rs = []
    for rep in sorted({r['rep'] for r in sel(section)}):
        x = [r[field] for r in sel(section, rep=rep, **a)]
        y = [r[field] for r in sel(section, rep=rep, **b)]
        if x and y and x[0] is not None and y[0]:
            rs.append(x[0] / y[0])
    return (statistics.median(rs) if rs else float('nan')), rs
def target(num, name, a, b, section, field, op, limit):
    v, rs = per_round(section, field, a, b)
    met = (v <= limit) if op == '<=' else (v >= limit)
    ma = m(section, field, **a); mb = m(section, field, **b)
    unit = 'us' if 'lat' in field else 'msg/s'
    say(f"- {num}. {name}: {v:.2f} (target {op} {limit}) -> {'met' if met else 'MISSED'} "
        f"[medians {ma:,.3f} vs {mb:,.3f} {unit}; per round {min(rs, default=float('nan')):.2f} .. "
        f"{max(rs, default=float('nan')):.2f}, {len(rs)} rounds]")
px = dict(transport='posix,self')
tx = dict(transport='tcp,self')
def lat(mode=None, shape='ucp_ifunc_lat', **k):
    d = dict(shape=shape, **k)
    if mode: d['mode'] = mode
    return d
for p in [x for x in (4, 64) if x in payloads]:
    target(1, f"Local ucp_ifunc_lat / ucp_am_lat, {p} B", lat('local', payload_bytes=p, **px),
           lat(shape='ucp_am_lat', payload_bytes=p, **px), 'sweep', 'lat_p50_us', '<=', 0.5)
if 4 in payloads and 64 in payloads:
    target(2, "Local ucp_ifunc_lat 4 B / ucp_put_lat 64 B", lat('local', payload_bytes=4, **px),
           lat(shape='ucp_put_lat', payload_bytes=64, sized_as='payload', **px), 'sweep', 'lat_p50_us',
           '<=', 1.3)
for p in [x for x in (4, 64) if x in payloads]:
    target(3, f"Local ucp_ifunc_bw / ucp_am_bw, {p} B", lat('local', shape='ucp_ifunc_bw', payload_bytes=p, **px),
           lat(shape='ucp_am_bw', payload_bytes=p, **px), 'sweep', 'msg_rate', '>=', 2.0)
    fr = m('sweep', 'frame_bytes', shape='ucp_ifunc_bw', mode='local', payload_bytes=p, **px)
    target(4, f"Local ucp_ifunc_bw {p} B / ucp_put_bw at its {fr:.0f}-byte frame",
           lat('local', shape='ucp_ifunc_bw', payload_bytes=p, **px),
           lat(shape='ucp_put_bw', payload_bytes=p, sized_as='local_frame', **px), 'sweep', 'msg_rate', '>=', 0.6)
if payloads:
    p = payloads[0]
    target(5, f"Injected / Local ucp_ifunc_lat, {p} B", lat('injected', payload_bytes=p, **px),
           lat('local', payload_bytes=p, **px), 'sweep', 'lat_p50_us', '<=', 1.3)
    target(6, f"Cached / Local ucp_ifunc_lat, {p} B", lat('cached', payload_bytes=p, **px),
           lat('local', payload_bytes=p, **px), 'sweep', 'lat_p50_us', '<=', 1.05)
    small = [q for q in payloads if q <= 16]
    frs = [m('sweep', 'frame_bytes', shape='ucp_ifunc_lat', mode='local', payload_bytes=q, **px) for q in small]
    if frs:
        say(f"- 7. smallest Local frame with <= 16 B of payload: {max(frs):.0f} bytes (target <= 64) -> "
            f"{'met' if max(frs) <= 64 else 'MISSED'} [{', '.join('%d B: %.0f' % (q, f) for q, f in zip(small, frs))}]")
    target(8, f"Local ucp_ifunc_lat / ucp_am_lat over tcp,self, {p} B", lat('local', payload_bytes=p, **tx),
           lat(shape='ucp_am_lat', payload_bytes=p, **tx), 'sweep', 'lat_p50_us', '<=', 1.1)

say("\n## tail latency, posix,self, 64 B payload (us): p50 / p99.9 / spread p99.9/p50-1")
say("| shape | no stress p50 | p99.9 | spread | stress-ng --vm p50 | p99.9 | spread |")
say("|---|---|---|---|---|---|---|")
for shape, mode, label in (('ucp_ifunc_lat', 'local', 'ifunc Local'), ('ucp_ifunc_lat', 'injected', 'ifunc Injected'),
                           ('ucp_ifunc_lat', 'cached', 'ifunc Cached'), ('ucp_put_lat', None, 'ucp_put_lat (frame size)'),
                           ('ucp_am_lat', None, 'ucp_am_lat')):
    cells = []
    for st in ('off', 'on'):
        a = m('tail', 'lat_p50_us', shape=shape, mode=mode, stress=st)
        b = m('tail', 'lat_p999_us', shape=shape, mode=mode, stress=st)
        cells += [f"{a:.3f}", f"{b:.3f}", f"{b / a - 1:.2f}" if a else 'nan']
    say(f"| {label} | " + " | ".join(cells) + " |")

say("\n## wait policies, ucp_ifunc_lat Local, 64 B (both processes wait with the policy; adaptive is the default)")
say("| transport | policy | how it waits here | lat avg us | p50 us | CPU s (both) | wall s | cores busy | CPU us per round trip |")
say("|---|---|---|---|---|---|---|---|---|")
pol_rows = []
for tls, pol in [(t, p) for t in ('posix,self', 'tcp,self') for p in ('adaptive', 'busy', 'pause', 'wfe', 'sleep')]:
    rs = [r for r in sel('policy', policy=pol, transport=tls) if not r.get('baseline')]
    bs = [r for r in sel('policy', policy=pol, transport=tls) if r.get('baseline')]
    if not rs:
        continue
    n = rs[0]['iters']
    cpu, wall = med([r['cpu_s'] for r in rs]), med([r['wall_s'] for r in rs])
    cpu0, wall0 = med([r['cpu_s'] for r in bs]), med([r['wall_s'] for r in bs])
    per = (cpu - cpu0) / n * 1e6 / 1.0
    # a run about as short as its baseline has no busy share to speak of
    busy = (cpu - cpu0) / (wall - wall0) if wall - wall0 > 0.05 else float('nan')
    lat = med([r['lat_avg_us'] for r in rs])
    pol_rows.append((tls, pol, lat, med([r['lat_p50_us'] for r in rs]), cpu - cpu0, busy, per))
    say(f"| {tls} | {pol} | {rs[0].get('wait', '?')} | {lat:.3f} | {med([r['lat_p50_us'] for r in rs]):.3f} | "
        f"{cpu:.2f} | {wall:.2f} | {busy:.2f} | {per:.2f} |")
say("(CPU s: user+sys of both processes, whole run; cores busy and per round trip: after subtracting a 1-iteration run of the same pair)")
say(cycles_note)

say("\n## signals, Local, posix,self (UCX_TC_IFUNC_SIGNAL; check is the default): p50 us and msg/s, medians")
for p in (4, 64):
    cells = []
    for sig in ('check', 'fence', 'trailer'):
        l = m('signal', 'lat_p50_us', shape='ucp_ifunc_lat', payload_bytes=p, signal=sig)
        b = m('signal', 'msg_rate', shape='ucp_ifunc_bw', payload_bytes=p, signal=sig)
        fr = m('signal', 'frame_bytes', shape='ucp_ifunc_lat', payload_bytes=p, signal=sig)
        cells.append(f"{sig} {l:.3f} us, {b:,.0f} msg/s ({fr:.0f}-byte frames)")
    fl, _ = per_round('signal', 'lat_p50_us', dict(shape='ucp_ifunc_lat', payload_bytes=p, signal='check'),
                      dict(shape='ucp_ifunc_lat', payload_bytes=p, signal='fence'))
    fb, _ = per_round('signal', 'msg_rate', dict(shape='ucp_ifunc_bw', payload_bytes=p, signal='check'),
                      dict(shape='ucp_ifunc_bw', payload_bytes=p, signal='fence'))
    say(f"- payload {p} B: " + "; ".join(cells) + f"; check/fence per round: latency {fl:.2f}, rate {fb:.2f}")

if bad:
    say(f"\n{len(bad)} points failed after retries:")
    for r in bad:
        say(f"- {r['section']} {r['shape']} {r.get('mode')} {r['transport']} {r['payload_bytes']} B: {r['error']}")
retried = [r for r in ok if r.get('retries')]
if retried:
    say(f"\n{len(retried)} runs were repeated because the receiving mailbox rejected a frame "
        "(a stale frame signal reappearing in a freed slot; see the README) or timed out:")
    shapes = {}
    for r in retried:
        key = (r['shape'], r.get('mode'), r['transport'])
        shapes[key] = shapes.get(key, 0) + r['retries']
    for key, v in sorted(shapes.items(), key=str):
        say(f"- {key[0]} {key[1]} {key[2]}: {v} repeated runs")

open(f"{out}/{prefix}_summary.txt", 'w').write("\n".join(lines) + "\n")

# data for the plots: one block per (transport, series)
series = [('ucp_put_lat', None, 'local_frame', 'ucp\\_put\\_lat (Local frame size)'),
          ('ucp_put_lat', None, 'payload', 'ucp\\_put\\_lat (payload size)'),
          ('ucp_am_lat', None, None, 'ucp\\_am\\_lat'),
          ('ucp_ifunc_lat', 'local', None, 'ifunc Local'),
          ('ucp_ifunc_lat', 'injected', None, 'ifunc Injected'),
          ('ucp_ifunc_lat', 'cached', None, 'ifunc Cached')]
with open(f"{out}/{prefix}_latency.dat", 'w') as f:
    for tls in ('posix,self', 'tcp,self'):
        for shape, mode, sized, title in series:
            f.write(f"# {tls} {title}\n")
            for p in payloads:
                kw = dict(shape=shape, transport=tls, payload_bytes=p)
                if mode: kw['mode'] = mode
                if sized: kw['sized_as'] = sized
                f.write(f"{p/4:g} {m('sweep', 'lat_avg_us', **kw)} {m('sweep', 'lat_p999_us', **kw)}\n")
            f.write("\n\n")
bw_series = [('ucp_put_bw', None, 'payload'), ('ucp_am_bw', None, None), ('ucp_ifunc_bw', 'local', None),
             ('ucp_ifunc_bw', 'injected', None), ('ucp_ifunc_bw', 'cached', None)]
with open(f"{out}/{prefix}_msgrate.dat", 'w') as f:
    for tls in ('posix,self', 'tcp,self'):
        for shape, mode, sized in bw_series:
            f.write(f"# {tls} {shape} {mode}\n")
            for p in payloads:
                kw = dict(shape=shape, transport=tls, payload_bytes=p)
                if mode: kw['mode'] = mode
                if sized: kw['sized_as'] = sized
                f.write(f"{p/4:g} {m('sweep', 'msg_rate', **kw)}\n")
            f.write("\n\n")
with open(f"{out}/{prefix}_tail.dat", 'w') as f:
    for shape, mode, label in (('ucp_ifunc_lat', 'local', 'Local'), ('ucp_ifunc_lat', 'injected', 'Injected'),
                               ('ucp_ifunc_lat', 'cached', 'Cached'), ('ucp_put_lat', None, 'put_lat'),
                               ('ucp_am_lat', None, 'am_lat')):
        vals = [m('tail', fld, shape=shape, mode=mode, stress=st) for st in ('off', 'on')
                for fld in ('lat_p50_us', 'lat_p999_us')]
        f.write(label + " " + " ".join(str(v) for v in vals) + "\n")
with open(f"{out}/{prefix}_policy.dat", 'w') as f:
    for tls in ('posix,self', 'tcp,self'):
        for t, pol, lat, p50, cpu, busy, per in pol_rows:
            if t == tls:
                f.write(f"{pol} {lat} {p50} {cpu} {busy} {per}\n")
        f.write("\n\n")
PY

d=$out/$prefix
gnuplot <<GP
set terminal pngcairo size 1100,480 noenhanced
set datafile missing "nan"
set logscale x 2
set xlabel "payload (4-byte integers)"
set key left top font ",9"
set grid
set output "${d}_latency.png"
set multiplot layout 1,2 title "one-way latency (avg, ucx_perftest, pinned pair) vs payload"
set logscale y
set ylabel "latency (us)"
set title "posix,self"
array T[6] = ["ucp_put_lat (Local frame size)", "ucp_put_lat (payload size)", "ucp_am_lat", "ifunc Local", "ifunc Injected", "ifunc Cached"]
plot for [i=0:5] "${d}_latency.dat" index i using 1:2 with linespoints title T[i+1]
set title "tcp,self"
plot for [i=6:11] "${d}_latency.dat" index i using 1:2 with linespoints notitle
unset multiplot
set output "${d}_msgrate.png"
set multiplot layout 1,2 title "message rate (ucx_perftest *_bw, window 32) vs payload"
set ylabel "messages/s"
set title "posix,self"
plot "${d}_msgrate.dat" index 0 using 1:2 with linespoints title "ucp_put_bw", \
     "" index 1 using 1:2 with linespoints title "ucp_am_bw", \
     "" index 2 using 1:2 with linespoints title "ifunc_bw Local", \
     "" index 3 using 1:2 with linespoints title "ifunc_bw Injected", \
     "" index 4 using 1:2 with linespoints title "ifunc_bw Cached"
set title "tcp,self"
plot for [i=5:9] "${d}_msgrate.dat" index i using 1:2 with linespoints notitle
unset multiplot
unset logscale x
set output "${d}_tail.png"
set title "p50 and p99.9 latency, posix,self, 64 B payload, with and without stress-ng --vm"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xlabel ""
set ylabel "latency (us)"
set logscale y
set key left top
plot "${d}_tail.dat" using 2:xtic(1) title "p50", "" using 3 title "p99.9", \
     "" using 4 title "p50, stress", "" using 5 title "p99.9, stress"
set output "${d}_policy.png"
set multiplot layout 1,2 title "wait policies, ucp_ifunc_lat Local, 64 B: cores kept busy and latency"
unset logscale y
set ylabel "cores busy (CPU s / wall s, both processes)"
set y2label "one-way latency (us)"
set y2tics
set ytics nomirror
set yrange [0:*]
set y2range [0:*]
set title "posix,self"
plot "${d}_policy.dat" index 0 using 5:xtic(1) title "cores busy" axes x1y1, \
     "" index 0 using 2 title "latency avg" axes x1y2
set title "tcp,self"
plot "${d}_policy.dat" index 1 using 5:xtic(1) title "cores busy" axes x1y1, \
     "" index 1 using 2 title "latency avg" axes x1y2
unset multiplot
GP
echo "# results: $jsonl, ${d}_summary.txt, ${d}_{latency,msgrate,tail,policy}.png, ${d}_profile.txt" >&2
echo "# total $(( $(date +%s) - t0 )) s" >&2
