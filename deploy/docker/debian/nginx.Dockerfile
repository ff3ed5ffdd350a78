# nginx (Debian's nginx-light) as the ingress stand-in, on the Debian root
# file system that deploy/docker/debian/build.sh made with debootstrap.
# Default buffer sizes, like ingress-nginx.
# Replace /etc/nginx/conf.d (a mounted directory); alone it answers
# /healthz on :8080.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && rm -f /etc/nginx/sites-enabled/default
COPY nginx.conf /etc/nginx/nginx.conf
COPY default.conf /etc/nginx/conf.d/default.conf
# www-data (uid 33 in every Debian); nothing it writes lives outside /tmp.
USER 33:33
EXPOSE 8080
ENTRYPOINT ["nginx", "-e", "stderr", "-g", "daemon off;"]
