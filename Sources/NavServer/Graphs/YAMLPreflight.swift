internal import CYaml
import NavJSON
import NavCore

/// A pass over a YAML text's events (libyaml's parser, as Yams uses it) before Yams composes it,
/// so that what composing and converting cost is bounded by the text's length.
///
/// Yams resolves an alias to a copy of its anchor's node while composing, and hashes and compares
/// mapping keys to find duplicates: a few hundred bytes of nested aliases stand for billions of
/// nodes, which composing (a key that is an alias) or converting (a value that is one) would walk.
/// Graph documents have no need for aliases, so any alias is refused; and nesting deeper than a
/// JSON document may is refused before Yams's recursive composer descends into it.
package enum YAMLPreflight {
    /// Refuses aliases (`*name`, merge keys `<<: *name` included), nesting deeper than
    /// `JSONValue.maximumDepth` and more nodes than `JSONValue.maximumValues` (counting mapping
    /// keys, which JSON would not), as JSON documents are bounded. Text that libyaml cannot parse passes, so that Yams reports the
    /// error (its events up to the error are the ones checked here).
    ///
    /// - Throws: `GraphDocument.ReadError` naming the line of the first alias or too-deep node.
    package static func check(_ text: String) throws(GraphDocument.ReadError) {
        let bytes = Array(text.utf8)
        let failure: GraphDocument.ReadError? = bytes.withUnsafeBufferPointer { buffer in
            // libyaml asserts on a null input; an empty text is Yams's to refuse.
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                return GraphDocument.ReadError(message: "the YAML parser could not be set up")
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, base, buffer.count)
            var depth = 0
            var nodes = 0
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                let line = Int(event.start_mark.line) + 1
                switch event.type {
                case YAML_ALIAS_EVENT:
                    return GraphDocument.ReadError(
                        message: "line \(line): YAML aliases (*name, <<: *name) are not supported in graphs; write the value out"
                    )
                case YAML_SCALAR_EVENT:
                    nodes += 1
                    if nodes > JSONValue.maximumValues {
                        return GraphDocument.ReadError(message: "line \(line): YAML with more than \(JSONValue.maximumValues) values")
                    }
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    nodes += 1
                    if nodes > JSONValue.maximumValues {
                        return GraphDocument.ReadError(message: "line \(line): YAML with more than \(JSONValue.maximumValues) values")
                    }
                    depth += 1
                    if depth > JSONValue.maximumDepth {
                        return GraphDocument.ReadError(message: "line \(line): YAML nested deeper than \(JSONValue.maximumDepth) levels")
                    }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT, YAML_NO_EVENT:
                    return nil
                default:
                    break
                }
            }
        }
        if let failure { throw failure }
    }
}
