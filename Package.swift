// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "navd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NavCore", targets: ["NavCore"]),
        .executable(name: "navd", targets: ["NavdEntry"]),
        // The daemon as a library, for the fuzz targets (Fuzz/Package.swift), which link it
        // with libFuzzer's `main` in place of the daemon's.
        .library(name: "NavDaemon", targets: ["navd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // The pure navigation engine: no I/O, no clock, no randomness, no C.
        .target(name: "NavCore"),
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
        // SHA-256 blocks with the x86 SHA extensions, chosen at run time (CPUID).
        .target(name: "CSHA256"),
        // Everything the daemon is, as a library: the `navd` binary's `main` lives in `NavdEntry`,
        // so that tests and fuzz targets can link the daemon without it.
        .target(
            name: "navd",
            dependencies: [
                "NavCore",
                "CSHA256",
                "CMicroHTTPD",
                "CSQLite",
                "CLibPQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "NavdEntry",
            dependencies: ["navd"],
            // jemalloc (Debian's libjemalloc) in place of glibc's malloc: a navigation allocates
            // and frees a few dozen small objects, and jemalloc's per-thread caches answer them
            // for less (navigate ~9% more requests/s on the benchmark machine; BENCHMARKS.md).
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        .testTarget(
            name: "NavCoreTests",
            dependencies: [
                "NavCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "navdTests",
            dependencies: ["navd", "NavCore", .product(name: "Yams", package: "Yams")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
