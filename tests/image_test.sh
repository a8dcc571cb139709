#!/bin/sh
# The container image, built and run with podman (.ci/run, after the suite):
# - builds it with the command docs/operations.md gives, exactly as written;
# - runs `--version` and `demo` in it as the StatefulSet runs the pod: user
#   65532, read-only root filesystem, a tmpfs on /tmp, no network, every
#   capability dropped, no privilege escalation;
# - checks the version it prints is the host binary's, the labels, the user,
#   the CA bundle, no shell, and the demo's outcome lines.
# Podman runs with its own storage (vfs, in a temporary directory, removed
# at the end) and the settings these machines need: runc, cgroupfs and no
# default ulimits (docs/operations.md#the-image).
# Environment: SOURCE_DIR (the checkout, default: this file's), FENCEKEEPER
# (the built binary the documented command names, default build/fencekeeper).
set -eu
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
FENCEKEEPER=${FENCEKEEPER:-$SOURCE_DIR/build/fencekeeper}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v podman >/dev/null 2>&1 || fail "no podman (bash .ci/install-deps test installs it)"
command -v runc >/dev/null 2>&1 || fail "no runc (bash .ci/install-deps test installs it)"
started=$(date +%s)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT  # the storage is in there too
cat > "$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
EOF
cat > "$work/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$work/storage"
runroot = "$work/run"
EOF
export CONTAINERS_CONF="$work/containers.conf" CONTAINERS_STORAGE_CONF="$work/storage.conf"

# The documented build command, as written (its binary path and tag included).
command=$(grep '^bash deploy/image/build.sh ' "$SOURCE_DIR/docs/operations.md" | head -n1)
[ -n "$command" ] || fail "docs/operations.md documents no 'bash deploy/image/build.sh' command"
tag=$(echo "$command" | awk '{print $NF}')
expected_version=$("$FENCEKEEPER" --version)
(cd "$SOURCE_DIR" && sh -c "$command") > "$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "the documented build command failed: $command"; }
built=$(date +%s)
# Nothing left behind beside the tagged image: no dangling <none> images
# (issue 37: podman's layer cache left one after every build).
dangling=$(podman images -a --filter dangling=true -q)
[ -z "$dangling" ] || { podman images -a; fail "the build left dangling images: $dangling"; }
untagged=$(podman images -a --format '{{.Repository}}' | grep -c '<none>' || true)
[ "$untagged" = 0 ] || { podman images -a; fail "the build left $untagged untagged images"; }

# Metadata: user, entrypoint, labels.
podman image inspect --format '{{.Config.User}}|{{index .Config.Labels "org.opencontainers.image.version"}}|{{index .Config.Labels "org.opencontainers.image.revision"}}' \
  "$tag" > "$work/inspect.txt"
version=$(echo "$expected_version" | cut -d' ' -f2)
revision=$(echo "$expected_version" | sed 's/.*(commit \(.*\))$/\1/')
test "$(cat "$work/inspect.txt")" = "65532:65532|$version|$revision" ||
  fail "image user and labels are '$(cat "$work/inspect.txt")', want '65532:65532|$version|$revision'"
size=$(podman image inspect --format '{{.Size}}' "$tag")

# Contents: what nothing below runs — the CA bundle OpenSSL's default paths
# lead to, the licences — and no shell.
root=$(podman image mount "$tag")
[ -s "$root/usr/lib/ssl/cert.pem" ] || fail "no CA bundle behind /usr/lib/ssl/cert.pem in the image"
grep -q 'BEGIN CERTIFICATE' "$root/etc/ssl/certs/ca-certificates.crt" || fail "the image's CA bundle holds no certificate"
[ -s "$root/usr/share/doc/fencekeeper/LICENSE" ] || fail "no LICENSE in the image"
[ ! -e "$root/bin/sh" ] && [ ! -e "$root/usr/bin" ] || fail "the image has a shell or /usr/bin"
podman image unmount "$tag" >/dev/null

# As the StatefulSet runs it (deploy/statefulset.yaml's securityContext).
run_as_pod() {
  podman run --rm --read-only --user 65532:65532 --tmpfs /tmp --network none \
    --cap-drop all --security-opt no-new-privileges "$tag" "$@"
}
said=$(run_as_pod --version) || fail "--version failed in the image: $said"
test "$said" = "$expected_version" || fail "the image says '$said', the binary '$expected_version'"

run_as_pod demo > "$work/demo.txt" 2>&1 || { cat "$work/demo.txt"; fail "demo failed in the image"; }
for line in 'totals: 3 PATCHes, 3 warnings' \
  'fencekeeper held them (journaled once, never patched) and suspended each running one exactly once' \
  'suspended by fencekeeper (reason' \
  'second act: 2 PATCHes, 2 warnings'; do
  grep -qF "$line" "$work/demo.txt" || { cat "$work/demo.txt"; fail "the demo in the image did not print '$line'"; }
done
# The incident suspends 3; the second act (allow-dns) 2 more, reason fence-bypassed.
test "$(grep -c 'suspended by fencekeeper' "$work/demo.txt")" = 5 ||
  { cat "$work/demo.txt"; fail "the demo in the image did not suspend exactly 5 sandboxes (3 + 2)"; }
test "$(grep -c 'suspended by fencekeeper (reason fence-bypassed' "$work/demo.txt")" = 2 ||
  { cat "$work/demo.txt"; fail "the demo's second act did not suspend exactly 2 sandboxes as fence-bypassed"; }
# Its journal went to the tmpfs: the root filesystem took no write.
grep -q 'sqlite3 -readonly /tmp/fencekeeper-demo-' "$work/demo.txt" ||
  { cat "$work/demo.txt"; fail "the demo's journal is not under /tmp"; }
# `fencekeeper status` in the image, as an operator runs it through kubectl
# exec (there is no sqlite3 in it): a demo journal on a read-only volume.
mkdir "$work/journal"
"$FENCEKEEPER" demo --dir "$work/journal" > /dev/null 2>&1 || fail "the host binary's demo failed"
podman run --rm --read-only --user "$(id -u):$(id -g)" --tmpfs /tmp --network none --cap-drop all \
  --security-opt no-new-privileges -v "$work/journal:/var/lib/fencekeeper:ro" "$tag" \
  status --journal /var/lib/fencekeeper/journal.db --verdict held > "$work/status.txt" 2>&1 ||
  { cat "$work/status.txt"; fail "status failed in the image"; }
test "$(grep -c ' held ' "$work/status.txt")" = 7 ||
  { cat "$work/status.txt"; fail "status in the image did not list the demo's 7 held sandboxes"; }
echo "image test passed: $tag, $((size / 1024)) KiB, built in $((built - started)) s, ran in $(($(date +%s) - built)) s"
