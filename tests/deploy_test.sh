#!/bin/sh
# deploy/: the Dockerfile's runtime packages cover every shared library the
# built binary needs (beyond libc, libstdc++ and libgcc, which debian:12-slim has).
set -eu
missing=0
for lib in $(ldd "$FENCEKEEPER" | awk '$3 ~ /^\// {print $3}'); do
  real=$(readlink -f "$lib")
  pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true)
  pkg=$(echo "$pkg" | head -n1 | cut -d: -f1)
  case "$pkg" in
    libc6|libstdc++6|libgcc-s1) continue ;;
    libasan*|libubsan*|liblsan*) continue ;;  # sanitizer builds only
    "") echo "FAIL: no Debian package owns $lib"; missing=1; continue ;;
  esac
  if ! grep -q -- "$pkg" "$DOCKERFILE"; then
    echo "FAIL: $lib comes from $pkg, which deploy/Dockerfile does not install"
    missing=1
  fi
done
test "$missing" = 0
echo "deploy test passed: the runtime image installs every library the binary links"
