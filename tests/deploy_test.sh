#!/bin/sh
# deploy/Dockerfile and .dockerignore, checked without a container engine
# (tests/image_test.sh builds and runs the image):
# - the build stage's base is pinned (a point release or a digest, never
#   `12`), the image itself is FROM scratch plus the build stage's tree;
# - the OCI labels are there, and the version the image build defaults to is
#   CMake's PROJECT_VERSION, as is the tag deploy/ deploys;
# - the build context .dockerignore lets through is enough to configure the
#   build the Dockerfile runs.
# Environment: FENCEKEEPER (the built binary), SOURCE_DIR (the checkout).
set -eu
DOCKERFILE="$SOURCE_DIR/deploy/Dockerfile"
fail() { echo "FAIL: $*"; exit 1; }

# Pinned bases: debian:12.N[-slim] or an @sha256 digest; scratch.
grep '^FROM ' "$DOCKERFILE" | while read -r _ image _; do
  [ "$image" = scratch ] && continue
  echo "$image" | grep -Eq '^debian:12\.[0-9]+(-slim)?$|@sha256:[0-9a-f]{64}$' ||
    fail "base image $image is not pinned to a point release or a digest"
done
test "$(grep -c '^FROM ' "$DOCKERFILE")" = 2 || fail "expected two stages"
test "$(grep '^FROM ' "$DOCKERFILE" | tail -n1)" = "FROM scratch" || fail "the image is not FROM scratch"
# deploy/image/build.sh points this one line at its staged tree.
test "$(grep -cx 'COPY --from=build /rootfs/ /' "$DOCKERFILE")" = 1 || fail "the image does not copy the build stage's tree"

for label in title description version revision licenses; do
  grep -q "org.opencontainers.image.$label=" "$DOCKERFILE" || fail "no OCI label $label"
done

version=$("$FENCEKEEPER" --version | cut -d' ' -f2)
grep -q "^project(fencekeeper VERSION $version " "$SOURCE_DIR/CMakeLists.txt" ||
  fail "--version says $version, CMakeLists.txt's project() says otherwise"
grep -q "newTag: \"$version\"" "$SOURCE_DIR/deploy/kustomization.yaml" ||
  fail "deploy/kustomization.yaml does not deploy version $version"
test "$(grep -c "^ARG VERSION=$version\$" "$DOCKERFILE")" = 2 || fail "deploy/Dockerfile's VERSION is not $version in both stages"
grep -q 'fencekeeper --version)" = "fencekeeper ${VERSION} (commit ${REVISION})"' "$DOCKERFILE" ||
  fail "the image build does not check VERSION and REVISION against the binary"

# The context .dockerignore admits: '*' first, then only '!' entries.
test "$(sed -n '/^[^#]/p' "$SOURCE_DIR/.dockerignore" | head -n1)" = "*" ||
  fail ".dockerignore must start by excluding everything"
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
for entry in $(sed -n 's/^!//p' "$SOURCE_DIR/.dockerignore"); do
  entry=${entry%/}
  [ -e "$SOURCE_DIR/$entry" ] || continue  # LICENSE may be absent in a partial tree
  mkdir -p "$context/$(dirname "$entry")"
  cp -R "$SOURCE_DIR/$entry" "$context/$entry"
done
for needed in LICENSE .ci/install-deps deploy/image/stage-rootfs.sh; do
  [ -e "$context/$needed" ] || fail "the Dockerfile copies $needed, which the context lacks"
done
cmake -S "$context" -B "$context/build" -G Ninja -DFENCEKEEPER_BUILD_TESTS=OFF \
  -DFENCEKEEPER_BENCH=OFF -DFENCEKEEPER_GIT_COMMIT=0123456789ab >"$context/configure.log" 2>&1 ||
  { cat "$context/configure.log"; fail "the Docker build context cannot configure the build"; }
echo "deploy test passed: pinned base, FROM scratch, OCI labels, one version, a sufficient context"
