#!/bin/sh
# replay --html in a real browser: the demo's journal becomes a page that
# headless Chromium renders with no network. The DOM after the page's script
# ran must hold a lane per sandbox, the suspend intents linked to their
# outcomes, the fence generations as bands, a mark and a table row per
# journal row, a time axis, the lane-shading legend and the reasons printed
# under the lanes; and a screenshot at 1400x900 must be a non-empty PNG.
# Then a real takeover (two `run --leader-elect` against `fencekeeper sim`,
# the leader killed after suspending): both journals on one page, each row
# marked with its journal, both leader terms on the time axis.
# SCREENSHOT_TO / MERGED_SCREENSHOT_TO: where to copy the two screenshots.
# Exit 77 (skipped) without chromium or curl (.ci/install-deps installs them).
set -eu
command -v chromium >/dev/null 2>&1 || { echo "chromium not installed: skipped"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "curl not installed: skipped"; exit 77; }
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
"$FENCEKEEPER" demo --dir "$dir" > "$dir/demo.txt"
grep -q -- "--html incident.html" "$dir/demo.txt"
db="$dir/journal.db"
"$FENCEKEEPER" replay --journal "$db" --html "$dir/incident.html" > /dev/null

page="$dir/incident.html"
browse() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$dir/profile" "$@" "file://$page" 2> "$dir/chromium.log"
}
browse --dump-dom > "$dir/dom.html"

count() { grep -o -- "$1" "$dir/dom.html" | wc -l; }
rows() { sqlite3 -readonly "$db" "select count(*) from events $1"; }
expect() {  # expect WHAT ACTUAL WANTED
  if [ "$2" != "$3" ]; then echo "FAIL: $1: $2 in the DOM, want $3" >&2; exit 1; fi
  echo "ok: $1: $2"
}

grep -q "data-rendered=\"$(rows "")\"" "$dir/dom.html" || { echo "FAIL: the page script did not run" >&2; exit 1; }
# A lane for every sandbox the demo reports, and no other.
sed -n 's/^  \([a-z0-9-]*\/[a-z0-9-]*\): .*/\1/p' "$dir/demo.txt" > "$dir/sandboxes.txt"
expect "sandboxes in the demo report" "$(wc -l < "$dir/sandboxes.txt")" 12
while read -r sb; do
  expect "lane for $sb" "$(count "data-lane=\"sandbox\" data-sandbox=\"$sb\"")" 1
done < "$dir/sandboxes.txt"
expect "sandbox lanes" "$(count 'data-lane="sandbox"')" 12
# The transitions: each suspend intent, its applied outcome, and the link between them.
expect "suspend intent marks" "$(count 'data-mark="[0-9]*" data-kind="suspend_intent"')" "$(rows "where kind = 'suspend_intent'")"
expect "applied outcome marks" "$(count 'data-outcome="applied"')" 5  # 3 of the incident, 2 of the bypass act
expect "intent-outcome links" "$(count 'data-link="[0-9]*-[0-9]*"')" 5
for link in $(sqlite3 -readonly "$db" "select ref_seq || '-' || seq from events where kind = 'suspend_outcome'"); do
  expect "link $link" "$(count "data-link=\"$link\"")" 1
done
expect "suspend verdict marks" "$(count 'data-verdict="suspend"')" "$(rows "where kind = 'decided' and json_extract(payload, '$.verdict') = 'suspend'")"
# Fence generations: a band per fence observation; generation 2 once (the roll).
expect "fence bands" "$(count 'data-band="fence"')" "$(rows "where kind = 'fence_observed'")"
expect "generation 2 bands" "$(count 'data-band="fence" data-generation="2"')" 1
expect "fence lanes" "$(count 'data-lane="fence"')" 4
# Every journal row: one mark on the timeline and one table row.
expect "timeline marks" "$(count 'data-mark="[0-9]*"')" "$(rows "")"
expect "table rows" "$(count '<tr id="row-[0-9]*" data-row=')" "$(rows "")"

# The x-axis is time: ticks labelled with times of day, on the demo's span.
expect "time axis" "$(count 'data-axis="time"')" 1
# Issue 37: 2 or 3 ticks over the demo's span; rows in bursts get ticks of
# their own (how many regular ones fit depends on the span, which varies).
ticks=$(count 'data-tick-ms="[0-9]*"')
test "$ticks" -ge 5 || { echo "FAIL: $ticks time ticks, want 5 or more" >&2; exit 1; }
# No two tick labels overlap (12 characters at most, 6.2 px each), none over the axis title.
grep -o '<text x="[0-9.]*" y="22" class="axis"' "$dir/dom.html" | sed 's/<text x="\([0-9.]*\)".*/\1/' | sort -n |
  awk 'NR > 1 && $1 - prev < 80 { bad = 1 } $1 < 270 { bad = 1 } { prev = $1 } END { exit bad }' ||
  { echo "FAIL: time tick labels overlap" >&2; exit 1; }
echo "ok: $ticks time ticks, none overlapping"
# The lane colours have a legend.
for v in healthy admitting hold suspend ignore; do
  expect "legend of lane shading $v" "$(count "data-shade=\"$v\"><i")" 1
done
# Reasons and notes are printed under the lanes, not only in tooltips: one
# printed note per intent and per outcome at least, the intents' reason among them.
notes=$(count 'class="note"[^>]*data-note="[0-9]*">')
test "$notes" -ge "$(rows "where kind in ('suspend_intent', 'suspend_outcome')")" || { echo "FAIL: $notes printed notes" >&2; exit 1; }
grep -q 'data-note="[0-9]*">[^<]*fence-stale' "$dir/dom.html" || { echo "FAIL: no printed reason fence-stale" >&2; exit 1; }
# Issue 37: where marks cluster, notes were cut to a few characters; each now
# takes a line of its own under the lane, whole.
expect "notes cut short" "$(grep -o 'data-note="[0-9]*">[^<]*…<' "$dir/dom.html" | wc -l)" 0
# Issue 37: narrow fence bands went unlabelled; each band has a label, short if it must.
expect "labelled fence bands" "$(grep -o 'data-band-label="\(generation\|absent\)' "$dir/dom.html" | wc -l)" "$(rows "where kind = 'fence_observed'")"
echo "ok: $notes printed notes"
# An existing file is not replaced without --force.
echo keep > "$dir/taken.html"
if "$FENCEKEEPER" replay --journal "$db" --html "$dir/taken.html" 2> "$dir/err.txt"; then echo "FAIL: overwrote" >&2; exit 1; fi
grep -q 'exists; give another file, or --force' "$dir/err.txt"
test "$(cat "$dir/taken.html")" = keep
"$FENCEKEEPER" replay --journal "$db" --html "$dir/taken.html" --force > /dev/null
grep -q 'id="fk-data"' "$dir/taken.html"
echo "ok: --html refuses an existing file, --force replaces it"

browse --screenshot="$dir/timeline.png" --window-size=1400,900 > /dev/null
test -s "$dir/timeline.png"
test "$(head -c 8 "$dir/timeline.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
echo "ok: screenshot $(wc -c < "$dir/timeline.png") bytes"
[ -z "${SCREENSHOT_TO:-}" ] || cp "$dir/timeline.png" "$SCREENSHOT_TO"

# --- A takeover: fencekeeper-0 leads and suspends, is killed; fencekeeper-1 takes over.
fail() { echo "FAIL: $*" >&2; for f in "$dir"/*.log; do echo "--- $f" >&2; tail -5 "$f" >&2; done; exit 1; }
"$FENCEKEEPER" sim --listen 127.0.0.1:0 --scenario "$SCENARIO" --write-kubeconfig "$dir/kubeconfig" > "$dir/sim.log" 2>&1 &
pids="$!"
n=0; until [ -s "$dir/kubeconfig" ]; do n=$((n + 1)); [ $n -gt 100 ] && fail "simulator did not start"; sleep 0.1; done
replica() {  # replica N: a `run` with leader election on, its own journal
  "$FENCEKEEPER" run --journal "$dir/fencekeeper-$1.db" --kubeconfig "$dir/kubeconfig" \
    --leader-elect --leader-election-namespace default --lease-duration 2s --renew-deadline 1500ms \
    --retry-period 200ms --resync 1s --http-addr 0 > "$dir/fencekeeper-$1.log" 2>&1 &
  pids="$pids $!"
  echo $!
}
await() {  # await JOURNAL QUERY MIN: until the journal has MIN rows in QUERY (20 s at most)
  n=0
  until [ "$(sqlite3 -readonly "$1" "select count(*) from $2" 2>/dev/null || echo 0)" -ge "$3" ]; do
    n=$((n + 1)); [ $n -gt 200 ] && fail "$1: fewer than $3 rows in $2"; sleep 0.1
  done
}
a="$dir/fencekeeper-0.db"; b="$dir/fencekeeper-1.db"
leader=$(replica 0)
await "$a" "leadership where state = 'acquired'" 1
await "$a" decisions 12
replica 1 > /dev/null
server=$(sed -n 's#^ *server: ##p' "$dir/kubeconfig")
curl -sf -X PATCH -H 'Content-Type: application/json-patch+json' \
  "$server/apis/networking.k8s.io/v1/namespaces/openshell-agents/networkpolicies/openshell-sandbox-workloads" \
  -d '[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":5501}]' > /dev/null || fail "fence roll"
await "$a" "transitions where outcome = 'applied'" 3
kill -9 "$leader"
await "$b" "leadership where state = 'acquired'" 1
await "$b" "decisions where verdict = 'hold'" 10
page="$dir/takeover.html"
(cd "$dir" && "$FENCEKEEPER" replay --journal fencekeeper-0.db --journal fencekeeper-1.db --html takeover.html > /dev/null)
browse --dump-dom > "$dir/dom.html"
total=$(( $(sqlite3 -readonly "$a" "select count(*) from events") + $(sqlite3 -readonly "$b" "select count(*) from events") ))
grep -q "data-rendered=\"$total\"" "$dir/dom.html" || fail "the merged page did not render $total rows"
expect "table rows of fencekeeper-0.db" "$(count '<td data-journal="0">fencekeeper-0.db</td>')" "$(sqlite3 -readonly "$a" "select count(*) from events")"
expect "table rows of fencekeeper-1.db" "$(count '<td data-journal="1">fencekeeper-1.db</td>')" "$(sqlite3 -readonly "$b" "select count(*) from events")"
expect "leadership lanes, one per journal" "$(count 'data-lane="leadership"')" 2
expect "leader terms" "$(count 'data-band="leader"')" 2
expect "labelled bands" "$(count 'data-band-label=')" "$(count 'data-band="')"
expect "journals in the legend" "$(count '<span data-journal="[01]"><i')" 2
test "$(count 'data-journal-mark="1"')" -gt 0 || fail "no mark names fencekeeper-1.db"
expect "time axis" "$(count 'data-axis="time"')" 1
# Time order: the rows' times never go back, and fencekeeper-1.db's first row
# after its start (a standby records its start, then nothing until it leads:
# its acquisition) comes after fencekeeper-0.db's last one.
grep -o '<tr id="row-[^>]*><td class="mono">[^<]*' "$dir/dom.html" | sed 's/.*>//' > "$dir/times"
test "$(wc -l < "$dir/times")" -eq "$total" || fail "$(wc -l < "$dir/times") row times, not $total"
sort -c "$dir/times" || fail "the table is not in time order"
first_b=$(grep -n 'data-journal="1">fencekeeper-1.db' "$dir/dom.html" | grep -v 'data-kind="writer_started"' |
  head -1 | cut -d: -f1)
last_a=$(grep -n 'data-journal="0">fencekeeper-0.db' "$dir/dom.html" | tail -1 | cut -d: -f1)
test "$first_b" -gt "$last_a" || fail "fencekeeper-1.db appended before fencekeeper-0.db's last row"
browse --screenshot="$dir/takeover.png" --window-size=1400,1000 > /dev/null
test "$(head -c 8 "$dir/takeover.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
echo "ok: merged screenshot $(wc -c < "$dir/takeover.png") bytes"
[ -z "${MERGED_SCREENSHOT_TO:-}" ] || cp "$dir/takeover.png" "$MERGED_SCREENSHOT_TO"
echo "replay html test passed"
