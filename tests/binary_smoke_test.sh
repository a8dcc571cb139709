#!/bin/sh
# The built binary as a user runs it: demo, then replay --check on the journal
# it leaves, then the contract views through the sqlite3 CLI.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$FENCEKEEPER" demo --dir "$dir" > "$dir/demo.txt"
grep -q 'totals: 3 PATCHes, 3 warnings' "$dir/demo.txt"
grep -q 'second act: 2 PATCHes, 2 warnings' "$dir/demo.txt"
"$FENCEKEEPER" replay --journal "$dir/journal.db" --check > "$dir/replay.txt"
grep -q '0 divergence(s)' "$dir/replay.txt"
applied=$(sqlite3 -readonly "$dir/journal.db" "select count(*) from transitions where outcome = 'applied'")
test "$applied" = 5
"$FENCEKEEPER" migrate --journal "$dir/journal.db" --check | grep -q 'up to date'
# A foreign file: exit code 2, untouched.
printf 'hello' > "$dir/foreign"
set +e
"$FENCEKEEPER" migrate --journal "$dir/foreign" 2> "$dir/err.txt"
rc=$?
set -e
test "$rc" = 2
grep -q "$dir/foreign" "$dir/err.txt"
test "$(cat "$dir/foreign")" = hello
echo "binary smoke test passed"
