#!/bin/sh
# replay --html in a real browser: the demo's journal becomes a page that
# headless Chromium renders with no network. The DOM after the page's script
# ran must hold a lane per sandbox, the suspend intents linked to their
# outcomes, the fence generations as bands, a mark and a table row per
# journal row; and a screenshot at 1400x900 must be a non-empty PNG.
# Exit 77 (skipped) without chromium (.ci/install-deps installs it).
set -eu
command -v chromium >/dev/null 2>&1 || { echo "chromium not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$FENCEKEEPER" demo --dir "$dir" > "$dir/demo.txt"
grep -q -- "--html incident.html" "$dir/demo.txt"
db="$dir/journal.db"
"$FENCEKEEPER" replay --journal "$db" --html "$dir/incident.html" > /dev/null

browse() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$dir/profile" "$@" "file://$dir/incident.html" 2> "$dir/chromium.log"
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
expect "applied outcome marks" "$(count 'data-outcome="applied"')" 3
expect "intent-outcome links" "$(count 'data-link="[0-9]*-[0-9]*"')" 3
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

browse --screenshot="$dir/timeline.png" --window-size=1400,900 > /dev/null
test -s "$dir/timeline.png"
test "$(head -c 8 "$dir/timeline.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
echo "ok: screenshot $(wc -c < "$dir/timeline.png") bytes"
[ -z "${SCREENSHOT_TO:-}" ] || cp "$dir/timeline.png" "$SCREENSHOT_TO"
echo "replay html test passed"
