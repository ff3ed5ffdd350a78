#!/usr/bin/env bash
# Builds pcourt/redis:dev and pcourt/nginx:dev from Debian's packages on a
# Debian root file system made here, so nothing is pulled from a registry:
#
#   1. debootstrap (minbase) of $DEBIAN_SUITE into .cache/debian/rootfs,
#   2. docker import of that tree as pcourt/debian-base:$DEBIAN_SUITE,
#   3. a small Dockerfile per image FROM that base, which installs the
#      package with apt from the same mirror and runs as a non-root user.
#
# Steps 1-2 are skipped while the imported base image exists (delete it,
# or set DEBIAN_REBUILD=1, to refresh it); step 3 is docker's layer cache.
# Needs root for debootstrap (and installs debootstrap with apt-get if
# absent) and a reachable Debian mirror ($DEBIAN_MIRROR).
set -euo pipefail
cd "$(dirname "$0")/../../.."

suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=.cache/debian
base=pcourt/debian-base:$suite
revision=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

if [[ ${DEBIAN_REBUILD:-} == 1 ]] || ! docker image inspect "$base" >/dev/null 2>&1; then
  if ! command -v debootstrap >/dev/null && [[ ! -x /usr/sbin/debootstrap ]]; then
    if [[ $(id -u) != 0 ]]; then
      echo "debootstrap is missing: apt-get install debootstrap (as root)" >&2
      exit 1
    fi
    echo "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  [[ $(id -u) == 0 ]] || { echo "debootstrap needs root" >&2; exit 1; }
  echo "debootstrap $suite from $mirror into $cache/rootfs"
  rm -rf "$cache/rootfs"
  mkdir -p "$cache"
  PATH=$PATH:/usr/sbin debootstrap --variant=minbase "$suite" "$cache/rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
    echo "debootstrap failed; the last lines of $cache/debootstrap.log:" >&2
    tail -n 20 "$cache/debootstrap.log" >&2
    exit 1
  }
  # No package cache, no apt lists, no machine id in the image.
  rm -rf "$cache"/rootfs/var/cache/apt/archives/*.deb "$cache"/rootfs/var/lib/apt/lists/*
  : >"$cache/rootfs/etc/machine-id"
  echo "docker import as $base"
  tar -C "$cache/rootfs" --numeric-owner -c . |
    docker import \
      --change "LABEL org.opencontainers.image.revision=$revision" \
      --change 'CMD ["/bin/bash"]' \
      - "$base" >/dev/null
  # The image is the cache; the tree is only needed to make it.
  rm -rf "$cache/rootfs"
else
  echo "$base exists: debootstrap skipped"
fi

for img in redis nginx; do
  echo "docker build pcourt/$img:dev"
  docker build -q \
    --build-arg BASE="$base" \
    --label org.opencontainers.image.revision="$revision" \
    -f "deploy/docker/debian/$img.Dockerfile" \
    -t "pcourt/$img:dev" deploy/docker/debian >/dev/null
done
