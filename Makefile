# navd — build, run, test. `make run` and `make test` are the two commands the README promises.
SWIFT ?= swift
LISTEN ?= 127.0.0.1:8080
STORE ?= sqlite:./.navd/navd.db
APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev libpq-dev libssl-dev libcurl4-openssl-dev libjemalloc-dev libyaml-dev pkg-config
PG_PACKAGES := postgresql
# Graphviz's `dot`: GraphvizTests draw every DOT diagram navd writes with it.
GRAPHVIZ_PACKAGES := graphviz
# The browser test: Debian's Chromium and its driver.
BROWSER_PACKAGES := chromium chromium-driver
# The JavaScript client's type check: Debian's TypeScript (tsc 4.8), Node itself.
JS_PACKAGES := nodejs node-typescript
# Every Python package the tests use (schemathesis, Selenium, the OpenAPI validator, hadolint,
# prometheus-client) goes into one virtual environment made here, pinned in
# scripts/requirements-test.txt: Debian's own Python refuses `pip install` (PEP 668), and a
# machine whose only Python is Debian's needs python3-venv for `python3 -m venv`.
PYTHON_PACKAGES := python3 python3-venv
VENV := .build/venv
PYTHON := $(VENV)/bin/python

.PHONY: format format-check all build release run check test deps test-deps python-tool python-deps browser-deps js-deps js-test python-client-venv python-client-test openapi-check metrics-check docs-check contract-test browser-test ui-screenshots docker-check bench bench-live clean fuzz fuzz-smoke client-test client-build client-codegen

all: build

## Install the C libraries navd links, with apt-get, when pkg-config cannot find them.
deps:
	@if ! pkg-config --exists libmicrohttpd sqlite3 libpq libcrypto libcurl jemalloc yaml-0.1 2>/dev/null; then \
		echo "installing $(APT_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi

## What the tests need beyond the build: PostgreSQL server binaries, Graphviz, the browser
## test's Chromium, and the Python packages in $(VENV).
test-deps: deps browser-deps python-deps js-deps
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing $(PG_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PG_PACKAGES) >/dev/null; \
	fi
	@if ! command -v dot >/dev/null 2>&1; then \
		echo "installing $(GRAPHVIZ_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(GRAPHVIZ_PACKAGES) >/dev/null; \
	fi

## python3 with its venv module, from apt-get when missing.
python-tool:
	@if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then \
		echo "installing $(PYTHON_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PYTHON_PACKAGES) >/dev/null; \
	fi

## $(VENV) with scripts/requirements-test.txt installed (again only when that file changes).
python-deps: python-tool
	@[ -x $(PYTHON) ] || python3 -m venv $(VENV)
	@cmp -s scripts/requirements-test.txt $(VENV)/requirements-test.txt \
		|| { $(PYTHON) -m pip install -q -r scripts/requirements-test.txt && cp scripts/requirements-test.txt $(VENV)/requirements-test.txt; }

## Headless Chromium and its WebDriver (Selenium comes with python-deps).
browser-deps: python-deps
	@if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ]; then \
		echo "installing $(BROWSER_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product navd

## Build release and serve Examples/news.json (the default graph) and Examples/stopwatch.json on $(LISTEN) with the embedded SQLite store.
run: release
	.build/release/navd serve --graph Examples/news.json --graph Examples/stopwatch.json --listen $(LISTEN) --store $(STORE)

## The fast loop, under 3 minutes on a warm build: the debug build, then every test that needs
## no external service and restarts no daemons. Left to `make test`: PostgreSQL (its store's
## tests and every test named for it), the durability suites that kill and restart daemons, and
## the full-disk and store-identity suites. Tests whose tool is missing (PostgreSQL, Graphviz)
## are skipped with the reason printed, unless CI=true, where they fail.
CHECK_SKIP := NavStorePostgresTests|[Pp]ostgres|DurabilityTests|FullDiskTests|StoreIdentityTests
check: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(CHECK_SKIP)'

## Unit, integration, contract and browser tests, NavClient's and the JavaScript and Python clients', the container checks, the /metrics
## check, then a short run of each fuzz target. The container's release build and NavClient's build start in the
## background (scripts/background.sh, at the lowest CPU priority) once the Swift tests are done, and use the cores
## the client, contract, browser and docs tests leave idle.
STATIC_BUILD = $(SWIFT) build -c release --static-swift-stdlib --product navd --scratch-path .build-static
test: test-deps openapi-check format-check
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	scripts/background.sh start static-release $(STATIC_BUILD)
	scripts/background.sh start navclient $(MAKE) client-build
	$(MAKE) python-client-test
	$(MAKE) js-test
	scripts/contract-test.sh
	scripts/browser-test.sh
	scripts/metrics-check.sh
	scripts/docs-check.sh
	scripts/background.sh wait static-release
	scripts/check-docker-libs.sh
	scripts/check-dockerfile.sh
	scripts/background.sh wait navclient
	NAVD_BINARY=$(CURDIR)/.build/debug/navd $(SWIFT) test --package-path clients/swift --skip-build
	$(MAKE) fuzz-smoke

## Every Swift file but NavClient's generated sources, in the project's style (.swift-format: the
## toolchain's `swift format`). `make format` rewrites them; `format-check` (part of `make test`) fails
## on any file the formatter would change.
SWIFT_SOURCES = $(shell git ls-files '*.swift' | grep -v '/Generated/')
format:
	$(SWIFT) format format --in-place --parallel $(SWIFT_SOURCES)
format-check:
	$(SWIFT) format lint --strict --parallel $(SWIFT_SOURCES)

## Each libFuzzer target (Fuzz/, FUZZING.md) for FUZZ_SECONDS seconds, one after another on one core.
FUZZ_SECONDS ?= 60
fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh $(FUZZ_SECONDS)

## A few seconds of each fuzz target: the harnesses build, the seeds pass, nothing shallow crashes.
FUZZ_SMOKE_SECONDS ?= 4
fuzz-smoke: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh $(FUZZ_SMOKE_SECONDS)

## NavClient (clients/swift/, a package of its own): its committed generated sources are exactly what
## swift-openapi-generator writes from openapi.yaml now, then its tests against the debug navd.
client-test: client-build
	$(SWIFT) build --product navd
	NAVD_BINARY=$(CURDIR)/.build/debug/navd $(SWIFT) test --package-path clients/swift --skip-build
## The codegen check and NavClient's build with its tests, in clients/swift/ only (never the daemon's .build/).
client-build: deps
	SWIFT=$(SWIFT) scripts/client-codegen.sh --check
	$(SWIFT) build --package-path clients/swift --build-tests

## The Python client and pytest plugin (clients/python/): a fresh $(CLIENT_VENV) with the package, its
## pytest extra and the pinned mypy (clients/python/requirements-dev.txt); `mypy --strict`; then its
## tests against the debug navd. One and a half to two minutes.
CLIENT_VENV := .build/venv-client
python-client-venv: python-tool
	rm -rf $(CLIENT_VENV) clients/python/build
	python3 -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/pip install -q './clients/python[pytest]' -r clients/python/requirements-dev.txt
python-client-test: deps python-client-venv
	$(SWIFT) build --product navd
	cd clients/python && $(CURDIR)/$(CLIENT_VENV)/bin/mypy --strict src tests
	cd clients/python && NAVD_BINARY=$(CURDIR)/.build/debug/navd $(CURDIR)/$(CLIENT_VENV)/bin/python -m pytest -q -p no:cacheprovider tests

## Node and tsc for the JavaScript client (clients/js/), with apt-get when either is missing.
js-deps:
	@if ! command -v node >/dev/null 2>&1 || ! command -v tsc >/dev/null 2>&1; then \
		echo "installing $(JS_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(JS_PACKAGES) >/dev/null; \
	fi

## The JavaScript client (clients/js/): its types checked against the module (tsc --checkJs,
## clients/js/tsconfig.json), then its tests against the debug navd (node --test).
js-test: js-deps deps
	$(SWIFT) build --product navd
	tsc -p clients/js
	NAVD_BINARY=$(CURDIR)/.build/debug/navd node --test clients/js/test/

## Regenerate NavClient's sources after a change to openapi.yaml (commit them).
client-codegen:
	SWIFT=$(SWIFT) scripts/client-codegen.sh

## schemathesis against a live debug navd (scripts/contract-test.sh; MAX_EXAMPLES, MAX_TIME, SEED).
contract-test: python-deps deps
	$(SWIFT) build --product navd
	scripts/contract-test.sh

## The web client (/ui/) in headless Chromium against a live debug navd (scripts/browser-test.sh).
browser-test: browser-deps deps
	$(SWIFT) build --product navd
	scripts/browser-test.sh

## Screenshots of the web client for docs/guide.md (docs/ui-*.png), taken by the browser test.
ui-screenshots: browser-deps deps
	$(SWIFT) build --product navd
	SCREENSHOTS=docs scripts/browser-test.sh

## The Dockerfile's runtime stage installs every library the static release binary links; hadolint
## finds nothing in it; the binary runs as the image runs it (scripts/check-dockerfile.sh).
docker-check: deps python-deps
	scripts/check-docker-libs.sh
	scripts/check-dockerfile.sh

## /metrics of a live debug navd read by prometheus_client's parser (scripts/metrics-check.sh).
metrics-check: python-deps deps
	$(SWIFT) build --product navd
	scripts/metrics-check.sh

## Every link and citation of the docs leads somewhere; the examples of README.md, docs/guide.md,
## docs/paths.md, docs/client-guide.md, clients/js/README.md and clients/python/README.md, run against a live debug navd (scripts/docs-check.sh;
## installs jq and curl when missing).
docs-check: deps js-deps
	$(SWIFT) build --product navd
	scripts/docs-check.sh

## openapi.yaml must be valid OpenAPI 3.1. (navd compiles the file in as a resource; the
## tests check that GET /openapi.yaml serves exactly its bytes.)
openapi-check: python-deps
	$(PYTHON) -c "from openapi_spec_validator import validate; import yaml; validate(yaml.safe_load(open('openapi.yaml')))"

bench: release
	bench/run.sh

## Live sessions at scale (BENCHMARKS.md): memory per idle watcher at 1,000 and 10,000, fan-out
## throughput and delivery latency, the polling modes, the epoll stall experiment. About 20 minutes.
bench-live: release
	bench/live.sh

clean:
	rm -rf .build .build-fuzz .navd clients/swift/.build clients/swift/.build-generator
