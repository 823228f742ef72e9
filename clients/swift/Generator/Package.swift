// swift-tools-version: 6.2
import PackageDescription

// swift-openapi-generator, pinned, and nothing else: `scripts/client-codegen.sh` runs it to write
// (or, in `make test`, to check) NavClient's generated sources from the repository's openapi.yaml.
// A package of its own so that NavClient's users never resolve or build the generator.
let package = Package(
    name: "navd-client-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")
    ],
    targets: []
)
