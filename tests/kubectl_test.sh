#!/bin/sh
# kubectl against `fencekeeper sim`, as a new user would try it (issue #3):
# get, create -f, patch --type merge, get -o yaml, delete, get -w; and as an
# operator looks at an incident (issue 11): the printer columns of
# `kubectl get sandboxes`, and fencekeeper's Events on a suspended and on a
# held sandbox in `kubectl describe sandbox` and `kubectl events --for`; and
# docs/operations.md's resume of a held sandbox, rehearsed (issue 19).
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

# README's example file, created as README runs it: from the repository root.
(cd "$SOURCE_DIR" && k create -f deploy/examples/sandbox.yaml) > "$dir/create.out" 2>&1 || fail "kubectl create -f deploy/examples/sandbox.yaml"
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
"$FENCEKEEPER" run --journal "$dir/journal.db" --kubeconfig "$KUBECONFIG" --resync 1s \
  --http-addr 127.0.0.1:0 > "$dir/run.out" 2>&1 &
run_pid=$!
# The rehearsal's probes, as README and docs/operations.md ask them (port 0:
# a free one, which run logs).
i=0
until addr=$(grep -o 'address=127.0.0.1:[0-9]*' "$dir/run.out" | head -n1 | cut -d= -f2) && [ -n "$addr" ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "fencekeeper run logged no probe address"
  sleep 0.1
done
i=0
until curl -s "http://$addr/readyz?verbose" > "$dir/readyz.out" && grep -q 'readyz check passed' "$dir/readyz.out"; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "/readyz?verbose never passed"
  sleep 0.1
done
grep -q '^\[+\]journal ok' "$dir/readyz.out" || fail "/readyz?verbose lacks the journal check"
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

# docs/operations.md's resume, rehearsed as its "Rehearse it against the
# simulator" block says: the edited fence restored (step 2: a new generation,
# intact, so stopped-1 is held as fence-stale); the simulator plays OpenShell's
# resume on request (step 3); fencekeeper's verdict goes hold -> admitting ->
# healthy, with no new transition and no PATCH of its own (step 4).
q() { sqlite3 -readonly "$dir/journal.db" "$1"; }
# stopped-1's verdicts in journal order, repeats folded.
verdicts() { q "SELECT verdict FROM decisions WHERE sandbox = 'stopped-1' ORDER BY seq" | uniq | tr '\n' ' '; }
k -n openshell-agents patch networkpolicy openshell-sandbox-workloads --type json \
  -p '[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":5500}]' > /dev/null 2>&1 || fail "restore the fence"
i=0
until [ "$(q 'SELECT count(*) FROM transitions')" = 3 ] && verdicts | grep -q 'hold $' &&
  [ "$(q "SELECT reason FROM decisions WHERE sandbox = 'stopped-1' ORDER BY seq DESC LIMIT 1")" = fence-stale ]; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "stopped-1 not held as fence-stale after the fence was restored: $(verdicts)"
  sleep 0.1
done
held=$(verdicts)
patches() { k get --raw '/sim/requests?resource=sandboxes&name=stopped-1' | sed 's/.*"patch":\([0-9]*\).*/\1/'; }
patches_before=$(patches)
k -n openshell-agents annotate sandbox stopped-1 sim.fencekeeper.dev/openshell-flow=resume > /dev/null 2>&1 ||
  fail "request the resume"
i=0
until [ "$(verdicts)" = "${held}admitting healthy " ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "verdicts of stopped-1: '$(verdicts)', want '${held}admitting healthy '"
  sleep 0.1
done
# The flow's last step (bootstrap complete) comes after healthy: wait for it.
i=0
until [ -z "$(k -n openshell-agents get sandbox stopped-1 -o jsonpath='{.metadata.annotations.sim\.fencekeeper\.dev/openshell-flow}')" ]; do
  i=$((i + 1)); [ $i -gt 100 ] && fail "the resume flow did not finish"
  sleep 0.1
done
q 'SELECT count(*) FROM transitions' > "$dir/transitions.out"
test "$(cat "$dir/transitions.out")" = 3 || fail "the resume made a new transition"
test "$(verdicts)" = "${held}admitting healthy " || fail "verdicts after the flow: '$(verdicts)'"
# kubectl's annotate and OpenShell's four PATCHes; none from fencekeeper.
test "$(($(patches) - patches_before))" = 5 || fail "PATCHes of stopped-1 during the resume: $(($(patches) - patches_before)), want 5"
# Step 4's check: the sandbox's fence annotations are the workload policy's uid and generation.
policy=$(k -n openshell-agents get networkpolicy openshell-sandbox-workloads -o jsonpath='{.metadata.uid} {.metadata.generation}')
recorded=$(k -n openshell-agents get sandbox stopped-1 -o jsonpath='{.metadata.annotations.openshell\.ai/sandbox-runtime-network-policy-uid} {.metadata.annotations.openshell\.ai/sandbox-runtime-network-policy-generation}')
test "$policy" = "$recorded" || fail "fence annotations '$recorded', policy '$policy'"
grep -q 'openshell openshell-agents/stopped-1: resume: bootstrap complete' "$dir/sim.out" || fail "the simulator did not say the flow's steps"
echo "kubectl test passed: get, create -f, patch, annotate, get -o yaml, delete, get -w, printer columns, describe (suspended and held), events --for, get events, the documented resume rehearsed"
