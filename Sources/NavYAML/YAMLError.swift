/// Why a YAML text could not be read, and where: a line and a column (both from 1, the column
/// counted in characters), as an editor shows them.
public struct YAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    init(at mark: YAMLMark, _ message: String) {
        self.init(line: mark.line, column: mark.column, message: message)
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A position in the text, from 1 (libyaml counts from 0).
struct YAMLMark: Hashable, Sendable {
    var line: Int
    var column: Int

    static let start = YAMLMark(line: 1, column: 1)
}
