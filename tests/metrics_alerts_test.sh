#!/bin/sh
# The metrics and the alerts against the real binary (issue 11): `fencekeeper
# run` against `fencekeeper sim --scenario incident-3525`, scraped on its own
# --metrics-addr. Checks that
#   - /metrics is served on the metrics port only, the probes on theirs only;
#   - the first watches are not counted as restarts;
#   - every series an alert expression names is in the real scrape;
#   - every metric a query of the Grafana dashboard (deploy/dashboards/
#     fencekeeper.json: its panels' and its variables' queries) names is in
#     the real scrape, a histogram's _bucket of a histogram;
#   - controller-runtime's and client-go's families move with the real work:
#     reconciles, work queue adds, API requests counted under the API
#     server's host:port, and leader_election_master_status 1 under the
#     --leader-election-id it was given;
#   - the README's metrics table lists exactly the families the scrape has;
#   - promtool accepts the PrometheusRule's groups and its unit tests pass
#     (deploy/components/prometheus-rule/tests.yaml: each alert fires and
#     stays quiet when it should).
# Exits 77 (reported by ctest as skipped, with this message) without promtool
# or jq.
set -eu
for tool in promtool jq; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "SKIPPED: $tool is not on the PATH (Debian: prometheus, jq); the alert tests did not run"
    exit 77
  fi
done
rules_dir="$SOURCE_DIR/deploy/components/prometheus-rule"
dashboard="$SOURCE_DIR/deploy/dashboards/fencekeeper.json"
lease=fk-metrics-test
dir=$(mktemp -d)
sim_pid=""
run_pid=""
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }
# Waits up to 20 s for a command to succeed.
await() {
  i=0
  until "$@"; do
    i=$((i + 1)); [ $i -gt 200 ] && return 1
    sleep 0.1
  done
}

"$FENCEKEEPER" sim --listen 127.0.0.1:0 --scenario incident-3525 \
  --write-kubeconfig "$dir/kubeconfig" > "$dir/sim.log" 2>&1 &
sim_pid=$!
await test -s "$dir/kubeconfig" || fail "the simulator did not start"
"$FENCEKEEPER" run --journal "$dir/journal.db" --kubeconfig "$dir/kubeconfig" \
  --http-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
  --leader-elect --leader-election-id "$lease" --dry-run-namespace team-healthy \
  > "$dir/run.log" 2>&1 &
run_pid=$!

# The ports the system picked, from the start-up log lines naming them.
port_of() { grep "serving $1" "$dir/run.log" | grep -o '127\.0\.0\.1:[0-9]*' | tail -1 | cut -d: -f2; }
await grep -q 'serving /metrics' "$dir/run.log" || fail "no metrics listener logged"
await grep -q 'serving /healthz' "$dir/run.log" || fail "no probe listener logged"
metrics="http://127.0.0.1:$(port_of /metrics)"
probes="http://127.0.0.1:$(port_of /healthz)"

ready() { curl -sf "$metrics/metrics" > "$dir/scrape.txt" && grep -q '^fencekeeper_ready 1' "$dir/scrape.txt"; }
await ready || fail "never ready on $metrics/metrics"
curl -sf "$probes/readyz" > /dev/null || fail "/readyz not served on the probe port"
code=$(curl -s -o /dev/null -w '%{http_code}' "$probes/metrics")
test "$code" = 404 || fail "/metrics answered $code on the probe port; expected 404"
code=$(curl -s -o /dev/null -w '%{http_code}' "$metrics/readyz")
test "$code" = 404 || fail "/readyz answered $code on the metrics port; expected 404"
curl -sf "$metrics/metrics" > "$dir/scrape.txt" || fail "scrape"

# An "allow DNS" policy opens the fence of team-healthy's workloads: both
# would be suspended for it (team-healthy is in dry-run), and the gauges of
# bypassed sandboxes and of those dry-run leaves running appear (each has a
# series only while a namespace has some).
server=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/sim.log" | head -1)
curl -sf -X POST -H 'Content-Type: application/json' \
  "$server/apis/networking.k8s.io/v1/namespaces/team-healthy/networkpolicies" \
  -d '{"metadata":{"name":"allow-dns"},"spec":{"podSelector":{"matchLabels":
      {"openshell.ai/boundary-role":"workload"}},"egress":[{"ports":[{"port":53,"protocol":"UDP"}]}]}}' \
  > /dev/null || fail "could not create allow-dns"
bypassed() {
  curl -sf "$metrics/metrics" > "$dir/scrape.txt" &&
    grep -q '^fencekeeper_fence_bypassed_sandboxes{sandbox_namespace="team-healthy"} 2' "$dir/scrape.txt" &&
    grep -q '^fencekeeper_sandboxes_would_suspend{sandbox_namespace="team-healthy"} 2' "$dir/scrape.txt"
}
await bypassed || fail "the bypass of team-healthy is not in the scrape: $(grep 'bypassed\|would' "$dir/scrape.txt")"
grep -q '^fencekeeper_enforcement_dry_run{sandbox_namespace="team-healthy"} 1' "$dir/scrape.txt" ||
  fail "fencekeeper_enforcement_dry_run does not show team-healthy"
grep -q '^fencekeeper_enforcement_dry_run{sandbox_namespace="\*"} 0' "$dir/scrape.txt" ||
  fail "fencekeeper_enforcement_dry_run{sandbox_namespace=\"*\"} is not 0"

# One watch per resource and namespace, none re-opened: no restarts.
grep '^fencekeeper_watch_restarts_total' "$dir/scrape.txt" > "$dir/restarts.txt"
test "$(wc -l < "$dir/restarts.txt")" = 3 || fail "expected 3 watch_restarts series"
if grep -qv ' 0$' "$dir/restarts.txt"; then fail "first watches counted as restarts: $(cat "$dir/restarts.txt")"; fi

# The metric names in PromQL expressions (one per line on stdin): strings,
# label matchers, ranges, grouping clauses and Grafana variables removed
# (label_values(metric, label) keeps its metric), then every identifier that
# is not called as a function or aggregation, nor a keyword.
promql_names() {
  sed -E -e 's/label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)[^)]*\)/\1/g' \
    -e 's/"([^"\\]|\\.)*"//g' -e 's/\{[^}]*\}//g' -e 's/\[[^]]*\]//g' \
    -e 's/(by|without|on|ignoring|group_left|group_right)[[:space:]]*\([^)]*\)//g' \
    -e 's/\$[a-zA-Z_]+//g' |
    grep -oE '[a-zA-Z_:][a-zA-Z0-9_:]*[[:space:]]*\(?' | grep -v '($' | sed 's/[[:space:]]*$//' |
    grep -vxE 'and|or|unless|bool|offset' | sort -u
}
# Each name is a series of the scrape; a _bucket, _sum or _count one of a histogram's.
check_names() {  # what names them, the file of names
  while read -r name; do
    grep -q "^$name[{ ]" "$dir/scrape.txt" || fail "$1 uses $name, which /metrics does not expose"
    case "$name" in
      *_bucket) grep -q "^# TYPE ${name%_bucket} histogram" "$dir/scrape.txt" ||
        fail "$1 uses $name, but ${name%_bucket} is not a histogram" ;;
    esac
  done < "$2"
}

# Every metric an alert names is exposed.
awk 'f{print substr($0,3)} /^spec:/{f=1}' "$rules_dir/prometheusrule.yaml" > "$dir/rules.yaml"
grep 'expr:' "$dir/rules.yaml" | sed 's/^ *expr://' | promql_names > "$dir/alert_names.txt"
test -s "$dir/alert_names.txt" || fail "no metric names found in the alert expressions"
check_names "an alert" "$dir/alert_names.txt"

# controller-runtime's and client-go's families count the real work.
sim_hostport=$(grep -o 'server: http://[^ ]*' "$dir/kubeconfig" | sed 's|server: http://||; s|/$||')
positive() { grep -q "^$1 [1-9]" "$dir/scrape.txt"; }
moved() {
  curl -sf "$metrics/metrics" > "$dir/scrape.txt" &&
    positive 'controller_runtime_reconcile_total{controller="sandbox",result="success"}' &&
    positive 'workqueue_adds_total{name="sandbox"}' &&
    positive 'workqueue_work_duration_seconds_count{name="sandbox"}' &&
    positive "rest_client_requests_total{code=\"200\",host=\"$sim_hostport\",method=\"GET\"}" &&
    positive 'rest_client_requests_total{code="201",host="'"$sim_hostport"'",method="POST"}'  # the Lease created
}
await moved || fail "controller_runtime/workqueue/rest_client families did not count the work of incident-3525 (API server $sim_hostport)"
positive "leader_election_master_status{name=\"$lease\"}" ||
  fail "leader_election_master_status{name=\"$lease\"} is not 1 on the leader"
positive 'controller_runtime_max_concurrent_reconciles{controller="sandbox"}' ||
  fail "controller_runtime_max_concurrent_reconciles is not set"

# Every metric a dashboard query names is exposed: the panels' queries
# (rows' nested panels included) and the query variables'.
jq -r '(.. | objects | select(has("targets")) | .targets[] | .expr),
       (.templating.list[] | select(.type == "query") | .query |
        if type == "object" then .query else . end)' "$dashboard" > "$dir/dashboard_queries.txt" ||
  fail "$dashboard is not JSON"
if grep -qx 'null\|' "$dir/dashboard_queries.txt"; then fail "a dashboard target has no expr"; fi
promql_names < "$dir/dashboard_queries.txt" > "$dir/dashboard_names.txt"
test "$(wc -l < "$dir/dashboard_names.txt")" -ge 20 ||
  fail "only $(wc -l < "$dir/dashboard_names.txt") metric names found in the dashboard's queries"
check_names "the dashboard" "$dir/dashboard_names.txt"

# The README's table of families is the scrape's list of families.
grep '^# TYPE ' "$dir/scrape.txt" | awk '{print $3}' | sort > "$dir/families.txt"
sed -n '/<!-- metrics:begin -->/,/<!-- metrics:end -->/p' "$SOURCE_DIR/README.md" |
  grep -o '^| `[a-z_]*`' | tr -d '|` ' | sort > "$dir/readme.txt"
test -s "$dir/readme.txt" || fail "no metrics table between the README's metrics markers"
diff "$dir/readme.txt" "$dir/families.txt" > "$dir/readme_diff.log" ||
  fail "README metrics table (<) differs from /metrics (>)"

cp "$rules_dir/tests.yaml" "$dir/tests.yaml"
promtool check rules "$dir/rules.yaml" > "$dir/promtool_check.log" 2>&1 || fail "promtool check rules"
promtool test rules "$dir/tests.yaml" > "$dir/promtool_test.log" 2>&1 || fail "promtool test rules"
echo "metrics and alerts test passed: $(wc -l < "$dir/families.txt") families, $(wc -l < "$dir/alert_names.txt") alert series, $(grep -c 'alert:' "$dir/rules.yaml") alerts unit-tested, $(wc -l < "$dir/dashboard_queries.txt") dashboard queries naming $(wc -l < "$dir/dashboard_names.txt") series"
