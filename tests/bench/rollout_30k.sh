#!/bin/sh
# A 30,000-sandbox rollout with real processes (docs/performance.md, issue 36):
# `fencekeeper sim` serves one namespace of N running sandboxes (two pods of
# ~9.5 KB each), `fencekeeper run` reconciles it; once it is ready the fence
# is rolled, and the run waits until every sandbox is suspended. It prints
# the time from the fence change fencekeeper observed to the last applied
# suspension (both from the journal), the run's peak RSS (VmHWM) and its RSS
# before the roll. Not part of the test suite: a benchmark, minutes long.
#   FENCEKEEPER=build/fencekeeper sh tests/bench/rollout_30k.sh [N]
set -eu
n=${1:-30000}
FENCEKEEPER=${FENCEKEEPER:-build/fencekeeper}
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; tail -5 "$dir/run.log" >&2; exit 1; }
kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$2/status"; }

cat > "$dir/scenario.yaml" <<EOF
namespaces:
  - name: agents
    generate: {count: $n, prefix: sb-}
    podBytes: 9500
EOF
"$FENCEKEEPER" sim --listen 127.0.0.1:0 --scenario "$dir/scenario.yaml" \
  --write-kubeconfig "$dir/kubeconfig" > "$dir/sim.log" 2>&1 &
pids="$!"
i=0; until [ -s "$dir/kubeconfig" ]; do i=$((i + 1)); [ $i -gt 6000 ] && fail "sim did not start within 10 minutes"; sleep 0.1; done
server=$(sed -n 's#^ *server: ##p' "$dir/kubeconfig")

started=$(date +%s.%N)
"$FENCEKEEPER" run --journal "$dir/journal.db" --kubeconfig "$dir/kubeconfig" \
  --http-addr 127.0.0.1:0 --log-format json > "$dir/run.log" 2>&1 &
run=$!
pids="$pids $run"
i=0
until addr=$(grep -o '"address":"127.0.0.1:[0-9]*"' "$dir/run.log" | head -n1 | cut -d'"' -f4) && [ -n "$addr" ]; do
  i=$((i + 1)); [ $i -gt 600 ] && fail "run logged no address"; sleep 0.1
done
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/readyz")" = 200 ]; do
  i=$((i + 1)); [ $i -gt 6000 ] && fail "run not ready within 10 minutes"; sleep 0.1
done
ready=$(date +%s.%N)
rss_ready=$(kb VmRSS "$run")

curl -sf -X PATCH -H 'Content-Type: application/json-patch+json' \
  "$server/apis/networking.k8s.io/v1/namespaces/agents/networkpolicies/openshell-sandbox-workloads" \
  -d '[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":5501}]' > /dev/null || fail "fence roll"
applied() { sqlite3 -readonly "$dir/journal.db" "select count(*) from transitions where outcome = 'applied'" 2>/dev/null || echo 0; }
i=0
until [ "$(applied)" -ge "$n" ]; do
  i=$((i + 1)); [ $i -gt 12000 ] && fail "$(applied) of $n suspended after 20 minutes"; sleep 0.1
done
hwm=$(kb VmHWM "$run")
q() { sqlite3 -readonly "$dir/journal.db" "$1"; }
seconds=$(q "select round((julianday(max(outcome_at)) - julianday((select min(recorded_at) from fence_observations
             where policy = 'openshell-sandbox-workloads' and generation = 2))) * 86400, 2) from transitions")
echo "sandboxes $n: ready after $(echo "$ready - $started" | bc) s, RSS then $((rss_ready / 1024)) MiB"
echo "fence change seen -> last suspension applied: $seconds s ($(echo "scale=0; $n / $seconds" | bc) suspends/s)"
echo "peak RSS (VmHWM) of run: $((hwm / 1024)) MiB ($((hwm * 1024 / n)) B a sandbox)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
