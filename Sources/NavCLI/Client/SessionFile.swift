import NavJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The session the CLI driver works on, remembered in `./.navd/session` by `navd session new`
/// (JSON: `{url, id, token, watchToken, graph}`, readable by its owner only: it holds the token),
/// and overridden by `NAVD_URL`, `NAVD_SESSION`, `NAVD_TOKEN`, then by the command's options.
struct SessionFile: Equatable {
    static let directory = ".navd"
    static let path = ".navd/session"
    static let defaultURL = "http://127.0.0.1:8080"

    var url: String?
    var id: String?
    var token: String?
    var watchToken: String?
    var graph: String?

    /// The remembered session, or an empty one when there is no file.
    /// - Throws: a message when the file exists but cannot be read as such.
    static func read(at path: String = SessionFile.path) throws(SessionFileError) -> SessionFile {
        guard FileManager.default.fileExists(atPath: path) else { return SessionFile() }
        guard let data = FileManager.default.contents(atPath: path), let value = try? JSONValue(parsing: Array(data)),
            let members = value.objectValue
        else {
            throw SessionFileError(message: "\(path) is not a session file (remove it, or run `navd session new`)")
        }
        return SessionFile(
            url: members["url"]?.stringValue, id: members["id"]?.stringValue, token: members["token"]?.stringValue,
            watchToken: members["watchToken"]?.stringValue, graph: members["graph"]?.stringValue
        )
    }

    /// Writes the file (mode 0600), creating `.navd/` if needed.
    func write(at path: String = SessionFile.path) throws(SessionFileError) {
        var members: [String: JSONValue] = [:]
        for (key, value) in [("url", url), ("id", id), ("token", token), ("watchToken", watchToken), ("graph", graph)] {
            if let value { members[key] = .string(value) }
        }
        var writer = JSONWriter()
        writer.write(.object(members))
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            let data = Data(writer.finish() + [UInt8(ascii: "\n")])
            guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw SessionFileError(message: "cannot write \(path)")
            }
            // createFile keeps an existing file's mode: set it in any case.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch let error as SessionFileError {
            throw error
        } catch {
            throw SessionFileError(message: "cannot write \(path): \(SystemErrorText.describe(error))")
        }
    }
}

struct SessionFileError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
