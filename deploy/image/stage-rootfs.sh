#!/bin/sh
# Stages the root tree of the fencekeeper image from a built binary:
#   deploy/image/stage-rootfs.sh BINARY ROOT
# ROOT (created, must not exist yet) gets exactly what the binary needs to run
# as user 65532 on a read-only root filesystem, and nothing else — no shell,
# no package manager:
#   /usr/local/bin/fencekeeper    the binary, stripped
#   every library `ldd` lists, at the path it lists, and the dynamic loader
#     (with the /lib -> usr/lib links of a merged-/usr system)
#   /usr/share/doc/PKG/copyright  the licence of each Debian package those come from
#   /etc/ssl/certs/ca-certificates.crt, and /usr/lib/ssl/{cert.pem,certs}
#     pointing at it: OpenSSL's default verify paths
#   /etc/passwd, /etc/group       root and nonroot (65532), so ids have names
#   /etc/nsswitch.conf            hosts from /etc/hosts, then DNS
#   /tmp                          mode 1777: podman's --tmpfs /tmp takes the
#                                 mode of the image's directory, and user 65532
#                                 must be able to create files there
#   /var/lib/fencekeeper          the journal's mount point, owned by 65532
#   /usr/share/doc/fencekeeper/LICENSE  from the checkout this script is in
# deploy/Dockerfile runs this in its build stage; deploy/image/build.sh runs
# it on the host for an image from a binary built there (docs/operations.md).
set -eu

usage() { echo "usage: deploy/image/stage-rootfs.sh BINARY ROOT" >&2; exit 2; }
[ $# -eq 2 ] || usage
binary=$1 root=$2
[ -x "$binary" ] || { echo "stage-rootfs: $binary is not an executable file" >&2; exit 2; }
[ ! -e "$root" ] || { echo "stage-rootfs: $root exists; give a new directory" >&2; exit 2; }
libs=$(ldd "$binary") || { echo "stage-rootfs: ldd cannot read $binary: $libs" >&2; exit 1; }
if echo "$libs" | grep -q 'not found'; then
  echo "stage-rootfs: $binary needs libraries this system lacks:" >&2
  echo "$libs" | grep 'not found' >&2
  exit 1
fi

mkdir -p "$root"
# Recreates in ROOT each symlinked directory on the way to PATH (e.g. /lib ->
# usr/lib on a merged-/usr system), so the file lands where the loader looks.
mirror_dirs() {
  dir=""
  for part in $(dirname "$1" | tr '/' ' '); do
    dir="$dir/$part"
    if [ -L "$dir" ] && [ ! -e "$root$dir" ] && [ ! -L "$root$dir" ]; then
      ln -s "$(readlink "$dir")" "$root$dir"
    fi
  done
  mkdir -p "$root$(readlink -f "$(dirname "$1")")"
}
copy_file() {  # the file PATH names (its content if a link), under its own name
  mirror_dirs "$1"
  cp -L "$1" "$root$(readlink -f "$(dirname "$1")")/$(basename "$1")"
}

mkdir -p "$root/usr/local/bin"
strip --strip-unneeded -o "$root/usr/local/bin/fencekeeper" "$binary"

# "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" and the loader's
# "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no path.
for lib in $(echo "$libs" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u); do
  copy_file "$lib"
  if command -v dpkg >/dev/null 2>&1; then
    pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true)
    pkg=$(echo "$pkg" | head -n1 | cut -d: -f1)
    if [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ]; then
      mkdir -p "$root/usr/share/doc/$pkg"
      cp "/usr/share/doc/$pkg/copyright" "$root/usr/share/doc/$pkg/copyright"
    fi
  fi
done

bundle=/etc/ssl/certs/ca-certificates.crt
[ -s "$bundle" ] || { echo "stage-rootfs: no CA bundle at $bundle (install ca-certificates)" >&2; exit 1; }
mkdir -p "$root/etc/ssl/certs" "$root/usr/lib/ssl"
cp -L "$bundle" "$root$bundle"
ln -s "$bundle" "$root/usr/lib/ssl/cert.pem"
ln -s /etc/ssl/certs "$root/usr/lib/ssl/certs"

printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' > "$root/etc/group"
printf '%s\n' 'hosts: files dns' > "$root/etc/nsswitch.conf"

license=$(dirname "$0")/../../LICENSE
[ -f "$license" ] || { echo "stage-rootfs: no LICENSE at $license" >&2; exit 1; }
mkdir -p "$root/usr/share/doc/fencekeeper"
cp "$license" "$root/usr/share/doc/fencekeeper/LICENSE"

mkdir -p "$root/tmp" "$root/var/lib/fencekeeper" "$root/home/nonroot"
chmod 1777 "$root/tmp"
chown 65532:65532 "$root/var/lib/fencekeeper" "$root/home/nonroot" 2>/dev/null ||
  echo "stage-rootfs: not root, so /var/lib/fencekeeper stays owned by $(id -u)" >&2
echo "stage-rootfs: $root holds $(find "$root" -type f | wc -l) files, $(du -sk "$root" | cut -f1) KiB"
