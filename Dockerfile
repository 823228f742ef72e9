# navd container image: a release binary with the Swift runtime linked in statically, run on
# Debian bookworm-slim as an unprivileged user.
#
#   docker build -t navd .
#   docker run -p 8080:8080 -v navd-data:/var/lib/navd navd
#   docker run -p 8080:8080 -e NAVD_ADMIN_TOKEN=... navd --listen 0.0.0.0:8080 --store postgres://...
#
# Arguments given to `docker run` replace the CMD defaults below, not the `navd serve` entrypoint.

# ---- build ------------------------------------------------------------------------------------
# Swift 6.3, not 6.1: Package.swift asks for swift-log 1.16.2 or later, whose manifest declares
# swift-tools-version 6.2, and a 6.1 toolchain refuses to load it. 6.3 is also what the
# project's own machines and CI build with.
FROM swift:6.3-bookworm AS build

RUN apt-get update \
    && apt-get install -y libmicrohttpd-dev libsqlite3-dev libpq-dev libjemalloc-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Fetch the dependencies in a layer of their own, so that editing a source file does not
# fetch them again. (Package.resolved is not part of the repository; see .dockerignore.)
COPY Package.* ./
RUN swift package resolve

COPY . .
RUN swift build -c release --static-swift-stdlib --product navd \
    && mkdir -p /staging \
    && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/navd" /staging/navd

# ---- runtime ----------------------------------------------------------------------------------
FROM debian:bookworm-slim

LABEL org.opencontainers.image.title="navd" \
      org.opencontainers.image.description="Navigation daemon: server-driven screen stacks over HTTP"

# The binary's dynamic libraries and the Debian packages that ship them:
#   libmicrohttpd.so.12  libmicrohttpd12 (brings libgnutls30 and its dependencies)
#   libsqlite3.so.0      libsqlite3-0
#   libpq.so.5           libpq5 (brings libssl3, libgssapi-krb5-2, libldap-2.5-0)
#   libjemalloc.so.2     libjemalloc2 (navd's malloc; see Package.swift)
#   libc.so.6, libm.so.6 libc6        } already in debian:bookworm-slim,
#   libstdc++.so.6       libstdc++6   } so not installed again
#   libgcc_s.so.1        libgcc-s1    }
# The Swift runtime and Foundation are linked in statically (--static-swift-stdlib).
# ca-certificates: the system CA bundle, for a PostgreSQL store reached over TLS with
# sslrootcert=/etc/ssl/certs/ca-certificates.crt.
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 libjemalloc2 ca-certificates && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 navd \
    && useradd --system --uid 10001 --gid navd --home-dir /var/lib/navd --no-create-home \
        --shell /usr/sbin/nologin navd \
    && mkdir -p /var/lib/navd /etc/navd/graphs \
    && chown navd:navd /var/lib/navd

COPY --from=build /staging/navd /usr/local/bin/navd
COPY --from=build /src/Examples/ /etc/navd/graphs/

# The SQLite store lives here; declared after the chown so a new volume starts owned by navd.
VOLUME /var/lib/navd
WORKDIR /var/lib/navd
EXPOSE 8080

USER navd

# Checks the default listen address: change the URL too when overriding --listen.
HEALTHCHECK CMD ["navd", "health", "--url", "http://127.0.0.1:8080/healthz"]

ENTRYPOINT ["navd", "serve"]
CMD ["--listen", "0.0.0.0:8080", "--graph", "/etc/navd/graphs/news.json", "--store", "sqlite:/var/lib/navd/navd.db"]
