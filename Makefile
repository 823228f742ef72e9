# navd — build, run, test. `make run` and `make test` are the two commands the README promises.
SWIFT ?= swift
LISTEN ?= 127.0.0.1:8080
STORE ?= sqlite:./.navd/navd.db
APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev libpq-dev libjemalloc-dev pkg-config
PG_PACKAGES := postgresql
# Graphviz's `dot`: GraphvizTests draw every DOT diagram navd writes with it.
GRAPHVIZ_PACKAGES := graphviz
SCHEMATHESIS_VERSION := 4.32.5
# The browser test: Debian's Chromium and its driver, Selenium (PyPI) in a virtual environment,
# since Debian's own Python refuses `pip install` (it is externally managed).
BROWSER_PACKAGES := chromium chromium-driver python3-venv
SELENIUM_VERSION := 4.51.0
VENV := .build/venv

.PHONY: all build release run test deps test-deps browser-deps openapi-check contract-test browser-test ui-screenshots docker-check bench bench-live clean fuzz fuzz-smoke

all: build

## Install the C libraries navd links, with apt-get, when pkg-config cannot find them.
deps:
	@if ! pkg-config --exists libmicrohttpd sqlite3 libpq jemalloc 2>/dev/null; then \
		echo "installing $(APT_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi

## What the tests need beyond the build: PostgreSQL server binaries, Graphviz, the OpenAPI
## validator and schemathesis, and the browser test's Chromium and Selenium.
test-deps: deps browser-deps
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing $(PG_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PG_PACKAGES) >/dev/null; \
	fi
	@if ! command -v dot >/dev/null 2>&1; then \
		echo "installing $(GRAPHVIZ_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(GRAPHVIZ_PACKAGES) >/dev/null; \
	fi
	@python3 -c "import openapi_spec_validator, yaml" 2>/dev/null || python3 -m pip install -q openapi-spec-validator pyyaml
	@[ "$$(python3 -c 'import schemathesis; print(schemathesis.__version__)' 2>/dev/null)" = "$(SCHEMATHESIS_VERSION)" ] \
		|| python3 -m pip install -q "schemathesis==$(SCHEMATHESIS_VERSION)"

## Headless Chromium, its WebDriver, and Selenium in $(VENV) (python3 -m venv; on Debian that needs python3-venv).
browser-deps:
	@if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ] || ! python3 -c 'import ensurepip' 2>/dev/null; then \
		echo "installing $(BROWSER_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null; \
	fi
	@[ -x $(VENV)/bin/python ] || python3 -m venv $(VENV)
	@[ "$$($(VENV)/bin/python -c 'import selenium; print(selenium.__version__)' 2>/dev/null)" = "$(SELENIUM_VERSION)" ] \
		|| $(VENV)/bin/python -m pip install -q "selenium==$(SELENIUM_VERSION)"

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product navd

## Build release and serve Examples/news.json on $(LISTEN) with the embedded SQLite store.
run: release
	.build/release/navd serve --graph Examples/news.json --listen $(LISTEN) --store $(STORE)

## Unit, integration, contract and browser tests, the container check, then a short run of each fuzz target.
test: test-deps openapi-check
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	scripts/contract-test.sh
	scripts/browser-test.sh
	scripts/check-docker-libs.sh
	$(MAKE) fuzz-smoke

## Each libFuzzer target (Fuzz/, FUZZING.md) for FUZZ_SECONDS seconds, one after another on one core.
FUZZ_SECONDS ?= 60
fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh $(FUZZ_SECONDS)

## A few seconds of each fuzz target: the harnesses build, the seeds pass, nothing shallow crashes.
FUZZ_SMOKE_SECONDS ?= 4
fuzz-smoke: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh $(FUZZ_SMOKE_SECONDS)

## schemathesis against a live debug navd (scripts/contract-test.sh; MAX_EXAMPLES, MAX_TIME, SEED).
contract-test: test-deps
	$(SWIFT) build --product navd
	scripts/contract-test.sh

## The web client (/ui/) in headless Chromium against a live debug navd (scripts/browser-test.sh).
browser-test: browser-deps deps
	$(SWIFT) build --product navd
	scripts/browser-test.sh

## Screenshots of the web client for the README (docs/ui-*.png), taken by the browser test.
ui-screenshots: browser-deps deps
	$(SWIFT) build --product navd
	SCREENSHOTS=docs scripts/browser-test.sh

## The Dockerfile's runtime stage installs every library the static release binary links.
docker-check: deps
	scripts/check-docker-libs.sh

## openapi.yaml must be valid OpenAPI 3.1. (navd compiles the file in as a resource; the
## tests check that GET /openapi.yaml serves exactly its bytes.)
openapi-check:
	python3 -c "from openapi_spec_validator import validate; import yaml; validate(yaml.safe_load(open('openapi.yaml')))"

bench: release
	bench/run.sh

## Live sessions at scale (BENCHMARKS.md): memory per idle watcher at 1,000 and 10,000, fan-out
## throughput and delivery latency, the polling modes, the epoll stall experiment. About 20 minutes.
bench-live: release
	bench/live.sh

clean:
	rm -rf .build .build-fuzz .navd
