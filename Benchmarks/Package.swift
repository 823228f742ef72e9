// swift-tools-version: 6.1
import PackageDescription

// Release-mode micro-benchmarks of NavCore's hot paths and of graph diagrams, kept out of the
// main package so that `swift build` and `swift test` there never pay for them.
//
//     swift run -c release --package-path Benchmarks navcore-bench
let package = Package(
    name: "navcore-bench",
    // Linux only, as the main package (no `platforms:` claim).
    // `name:` pins the identity to "navd" whatever the checkout folder of the main package is called.
    dependencies: [.package(name: "navd", path: "..")],
    targets: [
        .executableTarget(
            name: "navcore-bench",
            dependencies: [.product(name: "NavCore", package: "navd"), .product(name: "NavDiagram", package: "navd")]
        )
    ],
    swiftLanguageModes: [.v6]
)
