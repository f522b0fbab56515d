# The CPU hog the stress scripts run beside: stress-ng --cpu 2 --cpu-load 60,
# this 2-core machine's standard load. Sourced; the caller's EXIT trap calls
# hog_stop.
#   hog_start   start it, or fail (stress-ng missing, or it did not start)
#   hog_alive   fail unless it is still running (call after the runs)
#   hog_stop    end it
hog=
hog_start() {
    command -v stress-ng >/dev/null ||
        { echo "FAIL: stress-ng is missing (contrib/setup-deps.sh installs it)"; exit 1; }
    stress-ng --cpu 2 --cpu-load 60 --timeout 3600 >/dev/null 2>&1 &
    hog=$!
    sleep 0.5
    kill -0 "$hog" 2>/dev/null || { echo "FAIL: stress-ng did not start"; exit 1; }
}
hog_alive() {
    kill -0 "$hog" 2>/dev/null || { echo "FAIL: stress-ng stopped during the runs"; exit 1; }
}
hog_stop() {
    if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; fi
}
