#!/bin/sh
# Every `fencekeeper sim` command line in README.md's simulator section (the
# lines of its ```sh blocks that start with `fencekeeper sim`) is accepted as
# written: each starts, with its --listen and --write-kubeconfig replaced by
# a free port and a temp file, writes its kubeconfig once it listens, and
# exits 0 on SIGTERM. Every file its `kubectl create -f FILE` lines name exists,
# relative to the repository root as the section says to run them.
set -eu
dir=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

# The section runs from its heading to the next "## " heading.
awk '/^## The simulator/ {on = 1; next} /^## / {on = 0} on' "$README" |
  awk '/^```/ {block = !block; next} block && /^fencekeeper sim / {print}' > "$dir/examples"
count=$(wc -l < "$dir/examples")
[ "$count" -ge 3 ] || { echo "FAIL: found only $count 'fencekeeper sim' examples in README.md"; exit 1; }

awk '/^## The simulator/ {on = 1; next} /^## / {on = 0} on' "$README" |
  awk '/^```/ {block = !block; next} block && /^kubectl .*create -f / {print}' > "$dir/creates"
[ -s "$dir/creates" ] || { echo "FAIL: no 'kubectl create -f' example in README.md's simulator section"; exit 1; }
root=$(dirname "$README")
while IFS= read -r line; do
  file=${line##*create -f }
  file=${file%% *}
  [ -f "$root/$file" ] || { echo "FAIL: README example names a missing file: $line"; exit 1; }
  echo "ok: $file exists"
done < "$dir/creates"

n=0
while IFS= read -r line; do
  n=$((n + 1))
  # As a shell would split it, minus a trailing '&', with our listen address and kubeconfig.
  eval "set -- ${line%&}"
  shift 2  # fencekeeper sim
  args=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --listen|--write-kubeconfig) shift 2 ;;
      *) args="$args '$1'"; shift ;;
    esac
  done
  kubeconfig="$dir/kubeconfig.$n"
  eval "set -- $args"
  "$FENCEKEEPER" sim "$@" --listen 127.0.0.1:0 --write-kubeconfig "$kubeconfig" > "$dir/out.$n" 2>&1 &
  pid=$!
  i=0
  until [ -s "$kubeconfig" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "FAIL: README example rejected: $line"; cat "$dir/out.$n"; exit 1
    fi
    i=$((i + 1)); [ $i -gt 200 ] && { echo "FAIL: did not start: $line"; exit 1; }
    sleep 0.05
  done
  kill -TERM "$pid"
  wait "$pid" || { echo "FAIL: exit $? after SIGTERM: $line"; cat "$dir/out.$n"; exit 1; }
  pid=""
  echo "ok: $line"
done < "$dir/examples"
echo "all $n README simulator examples start"
