#!/bin/sh
# Builds the fencekeeper image from a binary built on this machine, with no
# registry and no base image (docs/operations.md#the-image; CI runs it in
# tests/image_test.sh):
#   bash deploy/image/build.sh BINARY TAG
# Stages the binary's root tree (stage-rootfs.sh), imports it as a local image
# and builds deploy/Dockerfile with its one `COPY --from=build` taking the tree
# from that image, so the result is the Dockerfile's last stage as a build
# from source makes it, and the build stage is skipped.
# VERSION and REVISION come from the binary's --version.
# Uses podman, else docker (CONTAINER_ENGINE=docker chooses); the engine's own
# settings come from its environment (for podman CONTAINERS_CONF and
# CONTAINERS_STORAGE_CONF).
set -eu

[ $# -eq 2 ] || { echo "usage: bash deploy/image/build.sh BINARY TAG" >&2; exit 2; }
[ -x "$1" ] || { echo "build.sh: $1 is not an executable file (build it: bash .ci/build build)" >&2; exit 2; }
binary=$(readlink -f "$1") tag=$2
cd "$(dirname "$0")/../.."
if [ -n "${CONTAINER_ENGINE:-}" ]; then engine=$CONTAINER_ENGINE
elif command -v podman >/dev/null 2>&1; then engine=podman
else engine=docker; fi

# "fencekeeper 0.1.0 (commit 0123456789ab)"
said=$("$binary" --version)
version=$(echo "$said" | sed -n 's/^fencekeeper \([^ ]*\) (commit [^)]*)$/\1/p')
revision=$(echo "$said" | sed -n 's/^fencekeeper [^ ]* (commit \([^)]*\))$/\1/p')
[ -n "$version" ] && [ -n "$revision" ] ||
  { echo "build.sh: $binary --version said '$said', not 'fencekeeper VERSION (commit REVISION)'" >&2; exit 1; }

work=$(mktemp -d)
rootfs_image=localhost/fencekeeper-rootfs:$(basename "$work" | tr '[:upper:]' '[:lower:]')
trap '"$engine" rmi "$rootfs_image" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
sh deploy/image/stage-rootfs.sh "$binary" "$work/rootfs"
tar -C "$work" -cf - rootfs | "$engine" import - "$rootfs_image" >/dev/null
copy='COPY --from=build /rootfs/ /'
[ "$(grep -cxF "$copy" deploy/Dockerfile)" = 1 ] ||
  { echo "build.sh: deploy/Dockerfile has no single line '$copy' to point at the staged tree" >&2; exit 1; }
sed "s|^$copy\$|COPY --from=$rootfs_image /rootfs/ /|" deploy/Dockerfile > "$work/Dockerfile"
# Podman caches each step as an image of its own; one (the step before the
# COPY) is left untagged and unused, a dangling <none> after every build.
# Without the cache there is nothing to leave: this build has no step worth
# caching (the tree is new each time). Docker's builder leaves none.
layers=""
"$engine" --version 2>/dev/null | grep -qi podman && layers="--layers=false"  # podman-docker too
"$engine" build $layers -f "$work/Dockerfile" --build-arg VERSION="$version" \
  --build-arg REVISION="$revision" -t "$tag" .
echo "build.sh: $tag holds fencekeeper $version (commit $revision)"
