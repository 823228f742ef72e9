import NavJSON

/// JSON for people to read and diff: a value whose compact form fits in `width` columns stays on
/// one line, a larger array or object puts each element on a line of its own, indented by two.
/// Keys sorted, as NavJSON writes them, so the same value always gives the same text.
public enum ReadableJSON {
    public static func text(_ value: JSONValue, width: Int = 100) -> String {
        var output = ""
        write(value, indent: 0, width: width, into: &output)
        return output + "\n"
    }

    /// Arrays of scalars (event types, names) stay on one line whatever their length.
    private static func isContainer(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .object: true
        default: false
        }
    }

    private static func compact(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(value)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    private static func write(_ value: JSONValue, indent: Int, width: Int, into output: inout String) {
        let flat = compact(value)
        let padding = String(repeating: " ", count: indent + 2)
        switch value {
        case .array(let elements) where indent + flat.count > width && elements.contains(where: isContainer):
            output += "[\n"
            for (position, element) in elements.enumerated() {
                output += padding
                write(element, indent: indent + 2, width: width, into: &output)
                output += position == elements.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "]"
        case .object(let members) where indent + flat.count > width && !members.isEmpty:
            output += "{\n"
            let keys = members.keys.sorted()
            for (position, key) in keys.enumerated() {
                let name = compact(.string(key)) + ": "
                output += padding + name
                if let member = members[key] { write(member, indent: indent + 2, width: width, into: &output) }
                output += position == keys.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        default:
            output += flat
        }
    }
}
