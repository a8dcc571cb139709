#!/bin/sh
# The README's first command is fast: `bash .ci/build demo` asks only for the
# build packages and builds only the fencekeeper binary, while `bash .ci/build
# test` still asks for the test tools and builds everything.
# Runs the real .ci/build and .ci/install-deps with dpkg-query, apt-get, sudo
# and cmake stubbed in PATH (each call recorded; the stubs say every package
# is installed), then configures the real tree as demo does with GoogleTest
# and Google Benchmark made unfindable: the demo's build must not need them.
# Environment: SOURCE_DIR (the checkout).
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
real_cmake=$(command -v cmake)

cat > "$work/bin/dpkg-query" <<'EOF'
#!/bin/sh
for last; do :; done
echo "$last" >> "$STUB_LOG.packages"
printf 'install ok installed'
EOF
for tool in apt-get sudo; do
  printf '#!/bin/sh\necho "%s $*" >> "$STUB_LOG.forbidden"; exit 1\n' "$tool" > "$work/bin/$tool"
done
# cmake: configure and build calls recorded; the "built" binary records how it is run.
cat > "$work/bin/cmake" <<'EOF'
#!/bin/sh
echo "$*" >> "$STUB_LOG.cmake"
case "$1" in --build) printf '#!/bin/sh\necho "fencekeeper $*" >> "%s.ran"\n' "$STUB_LOG" > "$2/fencekeeper"
                      chmod +x "$2/fencekeeper" ;;
esac
EOF
cat > "$work/bin/ctest" <<'EOF'
#!/bin/sh
echo "ctest $*" >> "$STUB_LOG.ran"
EOF
chmod +x "$work/bin/"*

run_ci_build() {  # MODE: runs .ci/build MODE with the stubs; logs in $work/MODE.*
  mkdir -p "$work/$1-build"
  PATH="$work/bin:$PATH" STUB_LOG="$work/$1" BUILD_DIR="$work/$1-build" \
    bash "$SOURCE_DIR/.ci/build" "$1" > "$work/$1.out" 2>&1 ||
    { cat "$work/$1.out"; fail ".ci/build $1 failed with the stubs"; }
  [ ! -e "$work/$1.forbidden" ] || fail ".ci/build $1 ran $(cat "$work/$1.forbidden") with every package installed"
}
run_ci_build demo
run_ci_build test

# Packages: demo asks for a strict subset of test's, none of the test tools.
sort -u "$work/demo.packages" > "$work/demo.set"
sort -u "$work/test.packages" > "$work/test.set"
for p in g++ cmake ninja-build libsqlitecpp-dev libboost-json1.81-dev prometheus-cpp-dev; do
  grep -qx "$p" "$work/demo.set" || fail "demo does not ask for the build package $p"
done
for p in libgtest-dev libbenchmark-dev clang clang-tidy chromium prometheus podman; do
  grep -qx "$p" "$work/test.set" || fail "test does not ask for $p"
  ! grep -qx "$p" "$work/demo.set" || fail "demo asks for the test tool $p"
done
extra=$(comm -23 "$work/demo.set" "$work/test.set")
[ -z "$extra" ] || fail "demo asks for packages test does not: $extra"
demo_count=$(wc -l < "$work/demo.set") test_count=$(wc -l < "$work/test.set")
[ "$demo_count" -lt "$test_count" ] || fail "demo asks for $demo_count packages, test for $test_count"

# Build: demo configures without the suite and builds the binary target alone.
grep -q -- '-DFENCEKEEPER_BUILD_TESTS=OFF' "$work/demo.cmake" || fail "demo configures the test suite: $(head -n1 "$work/demo.cmake")"
grep -q -- '-DFENCEKEEPER_BENCH=OFF' "$work/demo.cmake" || fail "demo configures the benchmarks"
test "$(grep -c -- '^--build' "$work/demo.cmake")" = 1 || fail "demo does not build exactly once"
grep -- '^--build' "$work/demo.cmake" | grep -Eq -- '--target fencekeeper( |$)' ||
  fail "demo builds more than the binary: cmake $(grep -- '^--build' "$work/demo.cmake")"
test "$(cat "$work/demo.ran")" = "fencekeeper demo" || fail "demo ran '$(cat "$work/demo.ran")'"
grep -q -- '-DFENCEKEEPER_BUILD_TESTS=ON' "$work/test.cmake" || fail "test does not configure the suite"
! grep -- '^--build' "$work/test.cmake" | grep -q -- '--target' || fail "test builds only one target"
grep -q '^ctest ' "$work/test.ran" || fail "test does not run ctest"

# The demo's configuration with the test libraries absent, as after
# `.ci/install-deps build` on a fresh machine: it must configure.
args=$(head -n1 "$work/demo.cmake" | sed "s|-B [^ ]*|-B $work/real|")
# shellcheck disable=SC2086  # the recorded arguments, split as .ci/build gave them
(cd "$SOURCE_DIR" && "$real_cmake" $args -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON) > "$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; fail "the demo's configuration needs GoogleTest or Google Benchmark"; }
echo "first command test passed: demo asks for $demo_count packages (test $test_count) and builds the fencekeeper target alone"
