internal import CLibYAML

/// One parsing event, copied out of libyaml's (whose memory is released at once).
enum YAMLEvent: Equatable {
    case streamStart, streamEnd
    case documentStart, documentEnd
    /// `*name`: what it names is not kept, since the reader refuses every alias.
    case alias
    /// `plain` is false for quoted ('…', "…") and block (|, >) scalars, which are always text.
    case scalar(text: String, tag: String?, plain: Bool)
    case sequenceStart(tag: String?), sequenceEnd
    case mappingStart(tag: String?), mappingEnd
}

/// libyaml's event parser over a copy of the text (`yaml_parser_parse`): the pull API, so the
/// reader decides after each event whether to go on, and nothing is composed that it refuses.
///
/// Owns the `yaml_parser_t` (at a fixed address: libyaml keeps a pointer to it as its read
/// handler's data) and the input it reads, and releases both in `deinit`.
final class LibYAMLParser {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>
    /// The text's length (`input` holds one byte more when the text is empty).
    private let length: Int
    private var initialised = false

    /// - Throws: `YAMLError` when libyaml cannot allocate its parser.
    init(_ bytes: some Collection<UInt8>) throws(YAMLError) {
        parser = .allocate(capacity: 1)
        parser.initialize(to: yaml_parser_t())
        // libyaml asserts that the input pointer is not null, even for an empty text.
        input = .allocate(capacity: max(bytes.count, 1))
        length = input.initialize(fromContentsOf: bytes)
        guard yaml_parser_initialize(parser) == 1 else {
            throw YAMLError(at: .start, "the YAML parser could not be set up (out of memory)")
        }
        initialised = true
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        if let base = input.baseAddress { yaml_parser_set_input_string(parser, base, length) }
    }

    deinit {
        if initialised { yaml_parser_delete(parser) }
        parser.deinitialize(count: 1)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event and where it starts (`yaml_parser_parse`).
    ///
    /// - Throws: `YAMLError` with libyaml's own description of what it expected, at its position.
    func next() throws(YAMLError) -> (event: YAMLEvent, mark: YAMLMark) {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw failure() }
        defer { yaml_event_delete(&event) }
        let mark = YAMLMark(line: event.start_mark.line + 1, column: event.start_mark.column + 1)
        switch event.type {
        case YAML_STREAM_START_EVENT: return (.streamStart, mark)
        case YAML_DOCUMENT_START_EVENT: return (.documentStart, mark)
        case YAML_DOCUMENT_END_EVENT: return (.documentEnd, mark)
        case YAML_ALIAS_EVENT: return (.alias, mark)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let text = scalar.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self) } ?? ""
            return (.scalar(text: text, tag: Self.text(scalar.tag), plain: scalar.style == YAML_PLAIN_SCALAR_STYLE), mark)
        case YAML_SEQUENCE_START_EVENT: return (.sequenceStart(tag: Self.text(event.data.sequence_start.tag)), mark)
        case YAML_SEQUENCE_END_EVENT: return (.sequenceEnd, mark)
        case YAML_MAPPING_START_EVENT: return (.mappingStart(tag: Self.text(event.data.mapping_start.tag)), mark)
        case YAML_MAPPING_END_EVENT: return (.mappingEnd, mark)
        default:
            // YAML_STREAM_END_EVENT, and YAML_NO_EVENT (what libyaml gives after the stream's end).
            return (.streamEnd, mark)
        }
    }

    private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: UnsafePointer($0)) }
    }

    /// libyaml's error as a `YAMLError`: its problem, where it was found, and what was being
    /// read then ("while parsing a flow mapping started at …").
    private func failure() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unreadable YAML"
        switch state.error {
        case YAML_MEMORY_ERROR:
            return YAMLError(at: .start, "out of memory reading the YAML")
        case YAML_READER_ERROR:
            // A byte-level problem (bad UTF-8, a control character): libyaml gives its offset only.
            let at = mark(ofByte: state.problem_offset)
            let value = state.problem_value >= 0 ? " (#x\(String(state.problem_value, radix: 16, uppercase: true)))" : ""
            return YAMLError(at: at, problem + value)
        default:
            let at = YAMLMark(line: state.problem_mark.line + 1, column: state.problem_mark.column + 1)
            guard let context = state.context.map({ String(cString: $0) }) else { return YAMLError(at: at, problem) }
            let started = YAMLMark(line: state.context_mark.line + 1, column: state.context_mark.column + 1)
            return YAMLError(at: at, "\(problem) (\(context) started at line \(started.line), column \(started.column))")
        }
    }

    /// The line and column of a byte offset into the input (columns counted in characters, as
    /// libyaml counts them; a byte that is not valid UTF-8 counts as one).
    private func mark(ofByte offset: Int) -> YAMLMark {
        var line = 1
        var column = 1
        for byte in input.prefix(min(offset, length)) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return YAMLMark(line: line, column: column)
    }
}
