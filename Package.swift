// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "navd",
    // No `platforms:`: navd is built and run on Linux only (it calls Glibc and reads /proc and the
    // cgroup files directly), and claiming a macOS version would promise a build nobody makes.
    products: [
        .library(name: "NavCore", targets: ["NavCore", "NavJSON"]),
        // Graph diagrams (model, layout, SVG), for the benchmarks (Benchmarks/Package.swift).
        .library(name: "NavDiagram", targets: ["NavDiagram"]),
        .executable(name: "navd", targets: ["navd"]),
        // The daemon's layers as a library, for the fuzz targets (Fuzz/Package.swift), which
        // link them with libFuzzer's `main` in place of the daemon's. Named for no target.
        .library(
            name: "NavDaemon",
            targets: [
                "NavCLI", "NavAPI", "NavHTTPClient", "NavSessions", "NavWebhooks", "NavStoreSQLite", "NavStorePostgres", "NavHTTP",
                "NavWire", "NavSnapshot", "NavJSON"
            ]
        )
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1")
    ],
    targets: [
        // Layers, lowest first; each target may import only those above it in this list
        // (docs/architecture.md, "Modules and layers"). The compiler enforces the direction: a lower layer cannot see a higher one.
        //
        // JSON values, their parser and writer, and the byte-level text helpers every layer shares
        // (hex digits, percent escapes). No I/O.
        .target(name: "NavJSON"),
        // The pure navigation engine: no I/O, no clock, no randomness, no C.
        .target(name: "NavCore", dependencies: ["NavJSON"]),
        .systemLibrary(
            name: "CLibYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // YAML text into JSON values: navd's own reader on libyaml's event parser (YAML 1.2 core
        // schema; aliases, duplicate keys and deep nesting refused). No Foundation: a YAML library
        // that imports it would link ICU's 34 MB of data into the binary.
        .target(name: "NavYAML", dependencies: ["NavJSON", "CLibYAML"]),
        // What a store keeps: the session snapshot (its writer, reader and schema number, and the
        // writer of its screens) and the event log (writer and reader). It cannot see NavWire, so
        // a change to an API shape cannot change stored bytes; old stored bytes must stay readable
        // (SnapshotUpgradeTests).
        .target(name: "NavSnapshot", dependencies: ["NavJSON", "NavCore"]),
        // One encoder (and decoder) per wire shape of docs/design.md, "Routes and wire shapes": session view, actions,
        // problem, summaries, entity tags. A screen and an event are answered in their stored
        // shapes, by NavSnapshot's writers: a change's events are written once, for the store and
        // the answer (StoredShapeTests holds openapi.yaml to those shapes).
        .target(name: "NavWire", dependencies: ["NavJSON", "NavCore", "NavSnapshot"]),
        // Diagrams of a graph: a model computed from the graph, its layered layout and the
        // renderers (SVG). Pure: no I/O.
        .target(name: "NavDiagram", dependencies: ["NavJSON", "NavCore"]),
        // Tours of a graph (intent sequences that cover its scenes or links, with the paths and
        // events the engine answers) and the document `navd tours` writes and `navd record` writes.
        // Pure: no I/O. Its intents are NavWire's batch-item form, read and written by NavWire.
        .target(name: "NavTours", dependencies: ["NavJSON", "NavCore", "NavWire"]),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // OpenSSL's libcrypto (libpq's dependency): SHA-256, and AES-256-GCM for sealed answers.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libcurl (OpenSSL flavour): the HTTP(S) client webhooks are delivered with.
        .systemLibrary(
            name: "CLibCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Sessions, graphs, auth, live watchers, budgets and the store protocol with the memory
        // store: the use cases, with domain errors only — no HTTP, no SQL. What both durable stores
        // share lives here too. Links no database client library.
        .target(
            name: "NavSessions",
            dependencies: [
                "NavJSON", "NavYAML", "NavCore", "NavWire", "NavSnapshot", "CLibCrypto",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The SQLite store (sessions, graphs, schema, change log, compaction, recovery): the only
        // target that links SQLite. May import NavSessions and below, never the API or the CLI.
        .target(
            name: "NavStoreSQLite",
            dependencies: ["NavJSON", "NavCore", "NavSnapshot", "NavSessions", "CSQLite"]
        ),
        // The PostgreSQL store (group commit, LISTEN/NOTIFY, session cache): the only target that
        // links libpq. May import NavSessions and below, never the API or the CLI.
        .target(
            name: "NavStorePostgres",
            dependencies: ["NavJSON", "NavCore", "NavSnapshot", "NavSessions", "CLibPQ"]
        ),
        // Webhook delivery of the feed: one deliverer per endpoint, CloudEvents batches signed as
        // Standard Webhooks, positions and leases in the store's meta values, and the one type
        // that posts over libcurl. May import NavSessions and below; no HTTP server, no SQL.
        .target(
            name: "NavWebhooks",
            dependencies: [
                "NavJSON", "NavSessions", "CLibCurl", "CLibCrypto", .product(name: "Logging", package: "swift-log")
            ]
        ),
        // HTTP/1.1 over libmicrohttpd: server, request, response (whole or streamed), router.
        // Knows nothing of sessions or navigation.
        .target(
            name: "NavHTTP",
            dependencies: ["NavJSON", "CMicroHTTPD", .product(name: "Logging", package: "swift-log")]
        ),
        // The HTTP API: routes, request bodies, the idempotent replay of answers, the one mapping
        // from domain errors to problem+json, the application (routes + service), CORS, the log
        // backend, the Prometheus metrics, and the resources it serves. May import NavSessions and
        // below, NavWebhooks (what its endpoints' status is) and NavHTTP; never a store
        // implementation (the CLI chooses and opens the store), never ArgumentParser.
        .target(
            name: "NavAPI",
            dependencies: [
                "NavJSON", "NavCore", "NavWire", "NavDiagram", "NavSessions", "NavWebhooks", "NavHTTP",
                .product(name: "Logging", package: "swift-log")
            ],
            // The API contract, served at /openapi.yaml: the repository's openapi.yaml (through a
            // symbolic link), compiled into the binary as bytes; and the reference web client
            // served at /ui/: its folder embedded whole (SwiftPM gives each file a `PackageResources`
            // member), so the one list of its files is the table in WebClientRoutes.
            resources: [
                .embedInCode("Resources/openapi.yaml"),
                .embedInCode("Resources/ui")
            ]
        ),
        // The command line's blocking HTTP/1.1 client over a socket and its text/event-stream
        // parser: what `navd session` and `navd replay` talk to a daemon with. Knows no server
        // code; may import NavJSON and NavWire only.
        .target(name: "NavHTTPClient", dependencies: ["NavJSON", "NavWire"]),
        // The command-line program: the ArgumentParser commands (serve, session driver, graph
        // export, tours, replay, store check/repair, validate, path, health), the daemon's wiring
        // (Daemon) and the choice of store (StoreFactory): the one target that sees every other,
        // and so the one place that links both store implementations.
        .target(
            name: "NavCLI",
            dependencies: [
                "NavJSON", "NavCore", "NavWire", "NavSnapshot", "NavDiagram", "NavTours", "NavSessions", "NavWebhooks",
                "NavStoreSQLite", "NavStorePostgres", "NavHTTP", "NavAPI", "NavHTTPClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The `navd` binary: its `main` alone, a call into NavCLI.
        .executableTarget(
            name: "navd",
            dependencies: ["NavCLI"],
            // jemalloc (Debian's libjemalloc) in place of glibc's malloc: a navigation allocates
            // and frees a few dozen small objects, and jemalloc's per-thread caches answer them
            // for less (navigate ~9% more requests/s on the benchmark machine; BENCHMARKS.md).
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        // bench/traffic.sh's tool: fills a store's feed with a million records and times traffic
        // and funnels on it (BENCHMARKS.md, "Traffic and funnels"). Not part of the daemon.
        .executableTarget(
            name: "navd-traffic-bench",
            dependencies: ["NavSessions", "NavStoreSQLite", "NavStorePostgres"],
            path: "bench/TrafficBench"
        ),
        .testTarget(
            name: "NavJSONTests",
            dependencies: ["NavJSON"]
        ),
        .testTarget(
            name: "NavYAMLTests",
            dependencies: ["NavYAML", "NavJSON"]
        ),
        .testTarget(
            name: "NavCoreTests",
            dependencies: [
                "NavCore",
                // The snapshot a store keeps is written and read by NavSnapshot: the property tests
                // check that every state the engine reaches survives it.
                "NavWire", "NavSnapshot",
                .product(name: "PropertyBased", package: "swift-property-based")
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "NavDiagramTests",
            dependencies: ["NavDiagram", "NavCore", "NavJSON", "NavTestSupport"]
        ),
        .testTarget(
            name: "NavToursTests",
            dependencies: ["NavTours", "NavCore", "NavJSON"]
        ),
        // What the daemon's tests share: the harnesses that run navd in process or as a child
        // (NavdHarness, DaemonHarness, InProcessHarness), ChildProcess, PostgresCluster, the HTTP and
        // event-stream clients, store faults, the OpenAPI validator, JSON helpers. A regular target
        // under Tests/, linked only by test targets; they `@testable import` it (debug builds are
        // testable), so its helpers need no access modifiers.
        //
        // Test targets mirror the library targets; a test that drives the whole daemon over HTTP
        // lives with what it is about (a store's durability under a daemon in that store's target),
        // else in NavAPITests.
        .target(
            name: "NavTestSupport",
            dependencies: [
                "NavJSON", "NavCore", "NavYAML", "NavWire", "NavSnapshot", "NavSessions", "NavStoreSQLite", "NavHTTP",
                "NavAPI", "NavHTTPClient", "NavCLI", "CSQLite", "CLibCrypto", .product(name: "Logging", package: "swift-log")
            ],
            path: "Tests/NavTestSupport"
        ),
        // The wire shapes: the direct writers against the plain JSON route, If-Match, and
        // openapi.yaml's screen and event held to the stored shapes the API answers.
        .testTarget(
            name: "NavWireTests",
            dependencies: ["NavJSON", "NavCore", "NavWire", "NavSnapshot", "NavSessions", "NavHTTP", "NavTestSupport"]
        ),
        // The storage format: its exact bytes, and old snapshots still load on every store.
        .testTarget(
            name: "NavSnapshotTests",
            dependencies: [
                "NavJSON", "NavCore", "NavWire", "NavSnapshot", "NavSessions", "NavStoreSQLite", "NavStorePostgres",
                "NavCLI", "NavTestSupport"
            ]
        ),
        // The HTTP layer: server, framing, hang-ups, streamed answers, router, deadlines.
        .testTarget(
            name: "NavHTTPTests",
            dependencies: [
                "NavJSON", "NavCore", "NavSessions", "NavHTTP", "NavTestSupport",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The use cases: sessions, kept answers, live sessions, the memory store, graphs, auth.
        .testTarget(
            name: "NavSessionsTests",
            dependencies: [
                "NavJSON", "NavCore", "NavWire", "NavSessions", "NavStoreSQLite", "NavStorePostgres", "NavHTTP",
                "NavAPI", "NavCLI", "NavTestSupport", .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The SQLite store, alone and under a daemon (restarts, kill -9, full disks, damage).
        .testTarget(
            name: "NavStoreSQLiteTests",
            dependencies: [
                "NavJSON", "NavCore", "NavSessions", "NavStoreSQLite", "NavAPI", "NavCLI", "NavTestSupport",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The PostgreSQL store, alone and under daemons (a cluster made by initdb per run).
        .testTarget(
            name: "NavStorePostgresTests",
            dependencies: [
                "NavCore", "NavWire", "NavSessions", "NavStorePostgres", "NavWebhooks", "NavCLI", "NavTestSupport",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The HTTP API, and whatever drives the whole daemon over HTTP (in process or spawned):
        // routes, errors, idempotency, watchers, the contract, abuse.
        .testTarget(
            name: "NavAPITests",
            dependencies: [
                "NavJSON", "NavCore", "NavWire", "NavDiagram", "NavSessions", "NavStoreSQLite", "NavHTTP", "NavAPI",
                "NavCLI", "NavTestSupport", .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Webhook delivery: signatures, batches, retries, positions across restarts, against
        // receivers the tests run.
        .testTarget(
            name: "NavWebhooksTests",
            dependencies: [
                "NavJSON", "NavCore", "NavSessions", "NavStoreSQLite", "NavWebhooks", "NavAPI", "NavCLI", "NavTestSupport",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The command line as a user runs it (subprocesses against a spawned daemon) and its settings.
        .testTarget(
            name: "NavCLITests",
            dependencies: [
                "NavJSON", "NavCore", "NavDiagram", "NavTours", "NavSessions", "NavStoreSQLite", "NavHTTP", "NavAPI",
                "NavCLI", "NavTestSupport", .product(name: "Logging", package: "swift-log")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
