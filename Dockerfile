# navd container image: a release binary with the Swift runtime linked in statically, run on
# Debian bookworm-slim as an unprivileged user.
#
#   docker build -t navd .
#   docker run -p 8080:8080 -v navd-data:/var/lib/navd navd
#   docker run -p 8080:8080 navd --admin-token "$TOKEN" --backend-token "$BACKEND"
#   docker run -p 8080:8080 -e NAVD_STORE=postgres://... -e NAVD_GRAPH=/etc/navd/graphs/kabukit.json navd
#
# The defaults are environment variables (ENV below), not CMD arguments: arguments given to
# `docker run` are added to them (an option wins over its variable), so the daemon still listens
# on every interface and loads the example graph whatever else is passed.

# ---- build ------------------------------------------------------------------------------------
# Swift 6.3, not 6.1: Package.swift asks for swift-log 1.16.2 or later, whose manifest declares
# swift-tools-version 6.2, and a 6.1 toolchain refuses to load it. 6.3 is also what the
# project's own machines and CI build with.
FROM swift:6.3-bookworm AS build

# (hadolint DL3008, ignored here and in the runtime stage: versions are not pinned because
# bookworm's archive keeps only the current version of each package, so a pinned version fails the
# build once a security update replaces it; the base image's tag fixes the release, and updates
# within it are what we want.)
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libpq-dev libssl-dev libcurl4-openssl-dev libjemalloc-dev libyaml-dev pkg-config binutils \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Fetch the dependencies in a layer of their own, so that editing a source file does not
# fetch them again. (Package.resolved is not part of the repository; see .dockerignore.)
COPY Package.* ./
RUN swift package resolve

# Stripped: the symbol tables and debug sections are about half the file, and a crash report
# needs none of them in the image (keep the unstripped build for symbolising one).
COPY . .
RUN swift build -c release --static-swift-stdlib --product navd \
    && mkdir -p /staging \
    && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/navd" /staging/navd \
    && strip /staging/navd

# ---- runtime ----------------------------------------------------------------------------------
FROM debian:bookworm-slim

LABEL org.opencontainers.image.title="navd" \
      org.opencontainers.image.description="Navigation daemon: server-driven screen stacks over HTTP"

# The binary's dynamic libraries and the Debian packages that ship them:
#   libmicrohttpd.so.12  libmicrohttpd12 (brings libgnutls30 and its dependencies)
#   libsqlite3.so.0      libsqlite3-0
#   libpq.so.5           libpq5 (brings libssl3, libgssapi-krb5-2, libldap-2.5-0)
#   libcrypto.so.3       libssl3 (AES-GCM for the sealed answers to keyed creates; libpq's too)
#   libcurl.so.4         libcurl4 (webhook delivery over http and https; OpenSSL's TLS)
#   libjemalloc.so.2     libjemalloc2 (navd's malloc; see Package.swift)
#   libyaml-0.so.2       libyaml-0-2 (YAML graphs: NavYAML reads libyaml's events)
#   libc.so.6, libm.so.6 libc6        } already in debian:bookworm-slim,
#   libstdc++.so.6       libstdc++6   } so not installed again
#   libgcc_s.so.1        libgcc-s1    }
# The Swift runtime and FoundationEssentials are linked in statically (--static-swift-stdlib);
# full Foundation is not linked at all, so neither is ICU and its 34 MB of data (docs/operations.md,
# "Container"; scripts/check-dockerfile.sh checks the binary holds none).
# ca-certificates: the system CA bundle, for a PostgreSQL store reached over TLS with
# sslrootcert=/etc/ssl/certs/ca-certificates.crt, and for https webhook endpoints.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 libssl3 libcurl4 libjemalloc2 libyaml-0-2 ca-certificates && rm -rf /var/lib/apt/lists/*

# A numeric user (below), so Kubernetes' `runAsNonRoot` can check it is not root without the
# image's /etc/passwd.
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

# Defaults that `docker run` arguments add to (and `-e` replaces): every interface, the news
# example, the SQLite store on the volume.
ENV NAVD_LISTEN=0.0.0.0:8080 \
    NAVD_GRAPH=/etc/navd/graphs/news.json \
    NAVD_STORE=sqlite:/var/lib/navd/navd.db

USER 10001:10001

# `navd health` asks /healthz at NAVD_LISTEN (0.0.0.0 and :: on loopback), so a changed listen
# address is followed; a large SQLite store checks its database at start-up, hence the start period.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["navd", "health"]

# SIGTERM: /readyz answers 503 for --drain (5 s) while requests are still served, then navd
# stops accepting and finishes what is in progress (--shutdown-grace, 10 s). `docker stop`
# waits 10 s by default: use `docker stop -t 20` (or a shorter NAVD_DRAIN).
STOPSIGNAL SIGTERM
ENTRYPOINT ["navd", "serve"]
