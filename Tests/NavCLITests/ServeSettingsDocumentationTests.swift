import Foundation
import Testing

@testable import NavTestSupport

/// Every `navd serve` option an operator can set is in docs/operations.md's configuration table, with its
/// `NAVD_` environment variable: an option only `--help` knows about is one operators never find
/// (`--cache-size` was missing from the table).
@Suite struct ServeSettingsDocumentationTests {
    @Test func everyServeOptionIsInTheReadmeConfigurationTable() throws {
        let help = try CLIProcess.navd(["serve", "--help"]).output
        let options = Set(
            help.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.drop { $0 == " " }
                guard trimmed.hasPrefix("--"), !trimmed.hasPrefix("--help"), !trimmed.hasPrefix("--version") else { return nil }
                return String(trimmed.prefix { $0 != " " && $0 != "," })
            })
        let variables = Set(
            help.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init).filter {
                $0.hasPrefix("NAVD_") && $0.count > 5
            })
        #expect(options.count >= 10, "navd serve --help lists its options: \(help)")

        let readme = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "## Configuration"))
        let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex)?.lowerBound ?? readme.endIndex
        let rows = readme[start.upperBound..<end].split(separator: "\n").filter { $0.hasPrefix("| `--") }
        for option in options.sorted() {
            #expect(
                rows.contains { $0.hasPrefix("| `\(option) ") || $0.hasPrefix("| `\(option)`") },
                "docs/operations.md's configuration table has no row for \(option)")
        }
        for variable in variables.sorted() {
            #expect(rows.contains { $0.contains("`\(variable)`") }, "docs/operations.md's configuration table does not name \(variable)")
        }
    }
}
