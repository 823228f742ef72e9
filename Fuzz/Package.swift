// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for navd, kept out of the main package (as Benchmarks/ is): a fuzz target has
// no `main` of its own (libFuzzer's is linked in), so it only links when built with the fuzzer
// sanitizer, and `swift build` there must never try. Build and run them with `make fuzz`
// (FUZZING.md); one by hand:
//
//     swift build --package-path Fuzz --scratch-path .build-fuzz -c release -Xswiftc -enable-testing \
//         --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product fuzz-path
//     SWIFT_BACKTRACE=enable=no .build-fuzz/release/fuzz-path -dict=Fuzz/Dictionaries/path.dict Fuzz/Corpus/path
let package = Package(
    name: "navd-fuzz",
    // Linux only, as the main package (no `platforms:` claim).
    // `name:` pins the identity to "navd" whatever the checkout folder of the main package is called.
    dependencies: [
        .package(name: "navd", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2")
    ],
    targets: [
        // What the targets share: input readers, the example graphs, the checks.
        .target(name: "FuzzSupport", dependencies: [.product(name: "NavCore", package: "navd")]),
        .executableTarget(name: "fuzz-path", dependencies: ["FuzzSupport", .product(name: "NavCore", package: "navd")]),
        .executableTarget(name: "fuzz-json", dependencies: ["FuzzSupport", .product(name: "NavCore", package: "navd")]),
        .executableTarget(
            name: "fuzz-graph",
            dependencies: [
                "FuzzSupport", .product(name: "NavCore", package: "navd"), .product(name: "NavDaemon", package: "navd")
            ]
        ),
        .executableTarget(
            name: "fuzz-navigator",
            dependencies: [
                "FuzzSupport", .product(name: "NavCore", package: "navd"), .product(name: "NavDaemon", package: "navd")
            ]
        ),
        .executableTarget(
            name: "fuzz-request",
            dependencies: [
                "FuzzSupport", .product(name: "NavCore", package: "navd"), .product(name: "NavDaemon", package: "navd"),
                .product(name: "Logging", package: "swift-log")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
