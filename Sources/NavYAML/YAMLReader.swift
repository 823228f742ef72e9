import NavJSON

/// Reads one YAML document into a `JSONValue`, on libyaml's event parser, in time and memory
/// bounded by the text's length.
///
/// - Scalars follow YAML 1.2's core schema (`CoreSchema`): a plain scalar may be null, a
///   boolean, an integer or a float; a quoted or block (`|`, `>`) scalar is always text. The
///   core tags (`!!str`, `!!int`, …, and `!`) are honoured; any other tag is refused.
/// - Mapping keys are scalars, read as their text (`200:` is the key `"200"`); a key given twice
///   in one mapping is refused, as is a mapping or sequence used as a key.
/// - Aliases (`*name`, merge keys `<<: *name` among them) are refused where they occur: a few
///   hundred bytes of nested aliases stand for billions of nodes. Anchors alone are harmless.
/// - Nesting deeper than `JSONValue.maximumDepth` and more than `JSONValue.maximumValues`
///   values (mapping keys counted) are refused, as JSON documents are, and the reader keeps its
///   own stack, so no nesting recurses.
/// - The text holds one document: none, or a second, is an error.
///
/// Every error names its line and column.
public enum YAMLReader {
    /// Reads YAML text given as UTF-8 bytes (a byte order mark is allowed; invalid UTF-8 is an error).
    ///
    /// - Throws: `YAMLError`, at the position of the first problem.
    public static func read(_ bytes: some Collection<UInt8>) throws(YAMLError) -> JSONValue {
        let parser = try LibYAMLParser(bytes)
        var builder = Builder()
        while true {
            let (event, mark) = try parser.next()
            if let document = try builder.take(event, at: mark) { return document }
        }
    }

    public static func read(_ text: String) throws(YAMLError) -> JSONValue {
        try read(Array(text.utf8))
    }
}

extension YAMLReader {
    /// The document under construction: a stack of the collections still open, innermost last.
    struct Builder {
        struct Collection {
            var isMapping: Bool
            var elements: [JSONValue] = []
            var members: [String: JSONValue] = [:]
            /// The key read and waiting for its value (mappings).
            var key: String?
            /// Where each key was first given, for the message about a second one.
            var keyLines: [String: Int] = [:]
        }

        private var open: [Collection] = []
        private var root: JSONValue?
        private var documents = 0
        private var values = 0

        /// Takes one event.
        ///
        /// - Returns: the document, once the stream has ended.
        mutating func take(_ event: YAMLEvent, at mark: YAMLMark) throws(YAMLError) -> JSONValue? {
            switch event {
            case .streamStart, .documentEnd:
                return nil
            case .documentStart:
                documents += 1
                guard documents == 1 else {
                    throw YAMLError(at: mark, "a second YAML document ('---'): send one document")
                }
                return nil
            case .streamEnd:
                guard let root else { throw YAMLError(at: mark, "the YAML document is empty") }
                return root
            case .alias:
                throw YAMLError(at: mark, "YAML aliases (*name, <<: *name) are not supported; write the value out")
            case .scalar(let text, let tag, let plain):
                try count(at: mark)
                if let last = open.indices.last, open[last].isMapping, open[last].key == nil {
                    try key(text, at: mark)
                    return nil
                }
                add(try scalar(text, tag: tag, plain: plain, at: mark))
                return nil
            case .sequenceStart(let tag):
                try start(mapping: false, tag: tag, at: mark)
                return nil
            case .mappingStart(let tag):
                try start(mapping: true, tag: tag, at: mark)
                return nil
            case .sequenceEnd, .mappingEnd:
                // libyaml pairs every end with its start, so a collection is open here.
                guard let closed = open.popLast() else { return nil }
                add(closed.isMapping ? .object(closed.members) : .array(closed.elements))
                return nil
            }
        }

        private mutating func count(at mark: YAMLMark) throws(YAMLError) {
            values += 1
            guard values <= JSONValue.maximumValues else {
                throw YAMLError(at: mark, "YAML with more than \(JSONValue.maximumValues) values")
            }
        }

        private mutating func start(mapping: Bool, tag: String?, at mark: YAMLMark) throws(YAMLError) {
            if let last = open.indices.last, open[last].isMapping, open[last].key == nil {
                throw YAMLError(at: mark, "a \(mapping ? "mapping" : "sequence") as a mapping key: keys must be text")
            }
            if let tag, tag != "!", tag != CoreSchema.tagPrefix + (mapping ? "map" : "seq") {
                throw YAMLError(at: mark, "the tag \(CoreSchema.written(tag)) is not supported on a \(mapping ? "mapping" : "sequence")")
            }
            try count(at: mark)
            guard open.count < JSONValue.maximumDepth else {
                throw YAMLError(at: mark, "YAML nested deeper than \(JSONValue.maximumDepth) levels")
            }
            open.append(Collection(isMapping: mapping))
        }

        private mutating func key(_ text: String, at mark: YAMLMark) throws(YAMLError) {
            let last = open.count - 1
            if let first = open[last].keyLines[text] {
                throw YAMLError(at: mark, "the key '\(text)' is given twice in one mapping (first at line \(first))")
            }
            open[last].keyLines[text] = mark.line
            open[last].key = text
        }

        private func scalar(_ text: String, tag: String?, plain: Bool, at mark: YAMLMark) throws(YAMLError) -> JSONValue {
            let resolution: CoreSchema.Resolution
            if let tag {
                let name = CoreSchema.written(tag)
                guard CoreSchema.scalarTags.contains(tag) else {
                    throw YAMLError(at: mark, "the tag \(name) is not supported (only !!str, !!int, !!float, !!bool, !!null and !)")
                }
                guard let tagged = CoreSchema.tagged(text, tag: tag) else { throw YAMLError(at: mark, "'\(text)' is not a valid \(name)") }
                resolution = tagged
            } else {
                resolution = plain ? CoreSchema.plain(text) : .value(.string(text))
            }
            switch resolution {
            case .value(let value):
                return value
            case .unrepresentable(let why):
                throw YAMLError(at: mark, "\(why); quote it to mean the text")
            }
        }

        private mutating func add(_ value: JSONValue) {
            guard let last = open.indices.last else {
                root = value
                return
            }
            if open[last].isMapping {
                // A value always has its key: a collection cannot start in a key's place (`start`).
                guard let key = open[last].key else { return }
                open[last].members[key] = value
                open[last].key = nil
            } else {
                open[last].elements.append(value)
            }
        }
    }
}
