import NavCore

#if canImport(Glibc)
    import Glibc
#endif

/// The example graphs of the repository (`Examples/`), read once per process.
public enum ExampleGraphs {
    /// The repository's root: `NAVD_ROOT` when set, else found from this source file's place
    /// (`<root>/Fuzz/Sources/FuzzSupport/ExampleGraphs.swift`).
    public static let root: String = {
        if let given = getenv("NAVD_ROOT") { return String(cString: given) }
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }()

    /// The bytes of `Examples/<name>`; traps when it cannot be read (a broken setup, not a finding).
    public static func bytes(_ name: String) -> [UInt8] {
        let path = root + "/Examples/" + name
        guard let file = fopen(path, "rb") else { fatalError("cannot open \(path) (set NAVD_ROOT to the repository)") }
        defer { fclose(file) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return result
    }

    public static func graph(_ name: String) -> Graph {
        do {
            return try Graph.decode(json: bytes(name)).graph
        } catch {
            fatalError("Examples/\(name) does not load: \(error)")
        }
    }

    public static let news = graph("news.json")
    public static let kabukit = graph("kabukit.json")
}
