import Foundation
import Testing

@testable import NavTestSupport

/// A file the CLI cannot read is named with the system's reason (`strerror`), not only "cannot read".
@Suite struct FileErrorTextTests {
    @Test func aGraphFileThatCannotBeReadIsNamedWithTheReason() throws {
        let folder = try TemporaryFolder()
        let missing = "\(folder.path)/missing.json"
        let refused = try TestFixtures.serveFails("memory", graph: missing)
        #expect(refused.errors.contains("cannot read \(missing): No such file or directory"), "\(refused.errors)")
        let validate = try CLIProcess.navd(["validate", folder.path])
        #expect(validate.status != 0)
        #expect((validate.output + validate.errors).contains("cannot read \(folder.path): Is a directory"), "\(validate)")
        let replay = try CLIProcess.navd(["replay", missing])
        #expect(replay.status != 0)
        #expect((replay.output + replay.errors).contains("\(missing): cannot read the tours file: No such file or directory"), "\(replay)")
    }
}
