import FuzzSupport
import NavCore

/// The path grammar (docs/design.md, "Paths"): any text either parses or is refused with `invalid_path` (the
/// parser's typed error); whatever parses prints canonically and parses back to itself, and
/// resolving it against a stage gives a path that round-trips too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPath(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        if let path = try? Path.parse(text) {
            let printed = path.description
            guard let again = try? Path.parse(printed) else {
                violated("\(text.debugDescription) prints as \(printed.debugDescription), which does not parse")
            }
            require(again == path, "\(text.debugDescription) → \(printed.debugDescription) parses to another path")
            require(again.description == printed, "printing \(printed.debugDescription) is not canonical")
            require((try? PathExpression.parse("^" + printed)) == .absolute(path), "^\(printed.debugDescription) is not the absolute path")
        }
        if let expression = try? PathExpression.parse(text) {
            let printed = expression.description
            guard let again = try? PathExpression.parse(printed) else {
                violated("\(text.debugDescription) prints as \(printed.debugDescription), which does not parse")
            }
            require(again == expression, "\(text.debugDescription) → \(printed.debugDescription) parses to another expression")
            require(again.description == printed, "printing \(printed.debugDescription) is not canonical")
            for base in bases {
                let resolved = base.resolving(expression)
                guard !resolved.isEmpty else { continue }
                let canonical = resolved.description
                require(
                    (try? Path.parse(canonical)) == resolved,
                    "\(text.debugDescription) from \(base) resolves to \(canonical.debugDescription), which does not parse back to itself")
                let diff = Path.diff(from: base, to: resolved)
                require(
                    diff.common.components.count + diff.add.count == resolved.components.count,
                    "diff from \(base) to \(canonical) does not add up")
                require(
                    diff.common.components.count + diff.remove.count == base.components.count,
                    "diff from \(base) to \(canonical) does not remove the rest")
            }
        }
    }
    return 0
}

/// Stages to resolve against: empty, a root, a tab bar with a modal.
private let bases: [Path] = ["", "/top", "/top#home/show(id=1)!/login(a=%2C)"].compactMap { try? Path.parse($0) }
