import ArgumentParser

/// The exit statuses of the commands that talk to a daemon (`navd session …`, `navd replay`) and
/// of `navd tours`; docs/guide.md, "Exit statuses". Scripts may rely on them.
enum ClientExit {
    /// The daemon applied the intent (or answered the read); a no-op counts as applied.
    static let ok: Int32 = 0
    /// The daemon refused: its problem `code` is on standard error, on one line. For `replay`,
    /// a difference between a tour and the daemon; for `tours`, an invalid graph.
    static let refused: Int32 = 1
    /// A usage error: bad arguments, a bad URL, no session remembered (EX_USAGE).
    static let usage: Int32 = 64
    /// An input file that is not what it should be: a tours document that does not parse (EX_DATAERR).
    static let badInput: Int32 = 65
    /// No daemon answered: down, unreachable, or not speaking HTTP (EX_UNAVAILABLE).
    static let unavailable: Int32 = 69
    /// The local session file could not be written (EX_CANTCREAT).
    static let cannotWrite: Int32 = 73

    /// Prints `navd: MESSAGE` on one line of standard error and exits with `status`.
    static func fail(_ status: Int32, _ message: String) -> ExitCode {
        let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        StandardStream.error.write(line: "navd: \(line)")
        return ExitCode(status)
    }
}
