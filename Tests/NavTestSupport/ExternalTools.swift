import Foundation
import Testing

/// Tools some tests need beyond the build: PostgreSQL's server binaries (`initdb`). On a machine
/// without one such a test is skipped, and Swift Testing prints why; under CI (`CI=true`, which
/// installs every tool with `make test-deps`) it runs and fails, so a missing tool never passes
/// silently there.
enum ExternalTools {
    /// Whether this run is CI's: the tools are required.
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    static var hasPostgres: Bool { PostgresCluster.binaries() != nil }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when PostgreSQL's server binaries are installed, or when `CI=true`.
    static var needsPostgres: Self {
        .enabled(
            if: ExternalTools.isCI || ExternalTools.hasPostgres,
            "PostgreSQL's server binaries (initdb) are not installed: `make test-deps` installs them; CI=true requires them"
        )
    }
}
