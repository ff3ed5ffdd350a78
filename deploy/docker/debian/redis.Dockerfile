# Redis from Debian's package, on the Debian root file system that
# deploy/docker/debian/build.sh made with debootstrap (no registry).
ARG BASE
FROM ${BASE}
# A fixed uid/gid, so Kubernetes' runAsNonRoot and volume ownership can be
# checked numerically; the package's postinst reuses the existing user.
RUN groupadd --system --gid 999 redis \
 && useradd --system --uid 999 --gid 999 --home-dir /var/lib/redis --shell /usr/sbin/nologin redis \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown 999:999 /data
USER 999:999
WORKDIR /data
VOLUME /data
EXPOSE 6379
# Append-only file with an fsync per write: a SIGKILL loses no acknowledged
# write. No password is baked in: pass --requirepass (from a secret) at run.
ENTRYPOINT ["redis-server"]
CMD ["--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--appendonly", "yes", "--appendfsync", "always"]
