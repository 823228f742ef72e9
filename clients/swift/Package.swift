// swift-tools-version: 6.2
import PackageDescription

// NavClient: a Swift client of navd's HTTP API (clients/swift/README.md). A package of its own, beside
// the daemon's (as Fuzz/ and Benchmarks/ are), so that the daemon's build and its tests never
// resolve or build AsyncHTTPClient and SwiftNIO, and the `navd` binary cannot carry the client.
//
// `Sources/NavClient/Generated` is written by swift-openapi-generator from the repository's
// openapi.yaml (`scripts/client-codegen.sh`; the generator is pinned in `Generator/Package.swift`),
// committed, and checked by `make test` to be exactly what the generator writes today.
let package = Package(
    name: "navd-client",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NavClient", targets: ["NavClient"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0")
    ],
    targets: [
        .target(
            name: "NavClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types")
            ]
        ),
        .testTarget(
            name: "NavClientTests",
            // Parts of the HTTP client's stack the tests name: AsyncHTTPClient for its
            // configuration, the runtime for the generated types' containers.
            dependencies: [
                "NavClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
