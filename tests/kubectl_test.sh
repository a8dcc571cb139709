#!/bin/sh
# kubectl against `fencekeeper sim`, as a new user would try it (issue #3):
# get, create -f, patch --type merge, get -o yaml, delete, get -w; and as an
# operator looks at an incident (issue 11): the printer columns of
# `kubectl get sandboxes`, and fencekeeper's Events on a suspended and on a
# held sandbox in `kubectl describe sandbox` and `kubectl events --for`.
# Exits 77 (reported by ctest as skipped, with this message) without kubectl.
set -eu
if ! command -v kubectl >/dev/null 2>&1; then
  echo "SKIPPED: kubectl is not on the PATH; the kubectl compatibility test did not run"
  exit 77
fi
dir=$(mktemp -d)
sim_pid=""
run_pid=""
cleanup() {
  [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; exit 1; }

"$FENCEKEEPER" sim --listen 127.0.0.1:0 --scenario "$SCENARIO" --write-kubeconfig "$dir/kubeconfig" > "$dir/sim.out" 2>&1 &
sim_pid=$!
i=0
until [ -s "$dir/kubeconfig" ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "simulator did not start"
  sleep 0.1
done
export KUBECONFIG="$dir/kubeconfig"
k() { kubectl --request-timeout=10s "$@"; }

k get sandboxes -A > "$dir/get.out" 2>&1 || fail "kubectl get sandboxes -A"
grep -q 'openshell-agents *active-1' "$dir/get.out" || fail "sandbox list lacks active-1"
test "$(grep -c 'openshell-agents' "$dir/get.out")" = 10 || fail "expected 10 sandboxes in openshell-agents"

# Server-side printer columns (a meta.k8s.io Table): NAME MODE FENCE AGE.
k -n openshell-agents get sandboxes > "$dir/columns.out" 2>&1 || fail "kubectl get sandboxes"
head -n 1 "$dir/columns.out" | grep -Eq '^NAME +MODE +FENCE +AGE *$' || fail "printer column headers"
grep -Eq '^active-1 +Running +1 +[0-9]+s *$' "$dir/columns.out" || fail "active-1 row: Running, fence 1"
grep -Eq '^stopped-1 +Suspended +1 +[0-9]+s *$' "$dir/columns.out" || fail "stopped-1 row: Suspended"
k get sandboxes.v1alpha1.agents.x-k8s.io -n openshell-agents > "$dir/columns-alpha.out" 2>&1 || fail "kubectl get v1alpha1 sandboxes"
grep -Eq '^stopped-1 +Suspended +1 ' "$dir/columns-alpha.out" || fail "v1alpha1 mode from replicas"

timeout 20 kubectl get sandboxes -n team-healthy -w > "$dir/watch.out" 2>&1 &
watch_pid=$!

k create -f "$SOURCE_DIR/deploy/examples/sandbox.yaml" > "$dir/create.out" 2>&1 || fail "kubectl create -f"
grep -q 'sandbox.agents.x-k8s.io/new-sb created' "$dir/create.out" || fail "create output"
k -n team-healthy get pod new-sb > /dev/null 2>&1 || fail "agent-sandbox emulation made no pod for a Running sandbox"

k -n team-healthy patch sandbox new-sb --type merge -p '{"spec":{"operatingMode":"Suspended"}}' > "$dir/patch.out" 2>&1 || fail "kubectl patch"
test "$(k -n team-healthy get sandbox new-sb -o jsonpath='{.metadata.generation}/{.spec.operatingMode}')" = "2/Suspended" || fail "patch did not bump generation to 2"
k -n team-healthy get sandbox new-sb -o jsonpath='{.status.conditions[?(@.type=="Suspended")].status}' > "$dir/cond.out"
test "$(cat "$dir/cond.out")" = True || fail "Suspended condition not True"
if k -n team-healthy get pod new-sb > /dev/null 2>&1; then fail "pod of a suspended sandbox still exists"; fi

# A metadata-only write does not bump the generation.
k -n team-healthy annotate sandbox new-sb example.com/note=hello > /dev/null 2>&1 || fail "kubectl annotate"
test "$(k -n team-healthy get sandbox new-sb -o jsonpath='{.metadata.generation}')" = 2 || fail "annotation bumped generation"

k get networkpolicies -A -o yaml > "$dir/netpol.out" 2>&1 || fail "kubectl get networkpolicies -A -o yaml"
test "$(grep -c 'name: openshell-sandbox-workloads' "$dir/netpol.out")" = 2 || fail "expected 2 workload fences"
grep -q 'openshell.ai/boundary-role: workload' "$dir/netpol.out" || fail "policy spec missing"

k -n team-healthy delete sandbox new-sb > "$dir/delete.out" 2>&1 || fail "kubectl delete"
grep -q 'deleted' "$dir/delete.out" || fail "delete output"
if k -n team-healthy get sandbox new-sb > /dev/null 2>&1; then fail "sandbox still there after delete"; fi

# The watch saw the create and later changes of new-sb (get -w prints one line per event).
i=0
until [ "$(grep -c '^new-sb' "$dir/watch.out" || true)" -ge 3 ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "kubectl get -w did not show the new sandbox's events"
  sleep 0.1
done
kill "$watch_pid" 2>/dev/null || true
grep -q '^healthy-1' "$dir/watch.out" || fail "watch lacks the initial list"

# fencekeeper run, the fence rolled, active-1 suspended: its Event (written as
# events.k8s.io/v1) shows where operators look, which reads core/v1 with
# involvedObject field selectors.
"$FENCEKEEPER" run --journal "$dir/journal.db" --kubeconfig "$KUBECONFIG" --resync 1s > "$dir/run.out" 2>&1 &
run_pid=$!
k -n openshell-agents patch networkpolicy openshell-sandbox-workloads --type json \
  -p '[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":5501}]' > /dev/null 2>&1 || fail "roll the fence"
# describe_until SANDBOX REASON OUT: kubectl describe until it shows an Event with REASON.
describe_until() {
  i=0
  until k -n openshell-agents describe sandbox "$1" > "$3" 2>&1 && grep -q "$2" "$3"; do
    i=$((i + 1)); [ $i -gt 300 ] && fail "kubectl describe sandbox $1 shows no $2 Event"
    sleep 0.1
  done
}
describe_until active-1 FailClosedSuspended "$dir/describe.out"
grep -Eq '^ +Warning +FailClosedSuspended +[0-9a-z]+ +openshell.ai/fencekeeper +[a-z-]+: ' "$dir/describe.out" ||
  fail "describe: the Event's type, reason, age, source or message"
test "$(grep -c 'FailClosedSuspended' "$dir/describe.out")" = 1 || fail "describe shows other sandboxes' Events"
k -n openshell-agents events --for sandbox/active-1 > "$dir/events.out" 2>&1 || fail "kubectl events --for"
grep -Eiq 'Warning +FailClosedSuspended +sandbox/active-1 ' "$dir/events.out" || fail "kubectl events --for sandbox/active-1"
test "$(grep -c 'FailClosedSuspended' "$dir/events.out")" = 1 || fail "kubectl events --for shows other sandboxes' Events"
k -n openshell-agents get events > "$dir/get-events.out" 2>&1 || fail "kubectl get events"
grep -Eq '^[0-9a-z]+ +Warning +FailClosedSuspended +sandbox/active-1 +' "$dir/get-events.out" || fail "kubectl get events columns"
# stopped-1 was suspended by its user before the roll: fencekeeper holds it
# and says so once (a Normal FailClosedHeld Event naming the way out).
describe_until stopped-1 FailClosedHeld "$dir/describe-held.out"
grep -Eq '^ +Normal +FailClosedHeld +[0-9a-z]+ +openshell.ai/fencekeeper +fence-[a-z]+: .*openshell sandbox start' "$dir/describe-held.out" ||
  fail "describe stopped-1: the held Event's type, reason, source or message"
grep -q 'FailClosedSuspended' "$dir/describe-held.out" && fail "stopped-1 was held, not suspended by fencekeeper"
k -n openshell-agents get sandbox active-1 > "$dir/suspended.out" 2>&1 || fail "kubectl get sandbox active-1"
grep -Eq '^active-1 +Suspended ' "$dir/suspended.out" || fail "active-1 not shown Suspended"
echo "kubectl test passed: get, create -f, patch, annotate, get -o yaml, delete, get -w, printer columns, describe (suspended and held), events --for, get events"
