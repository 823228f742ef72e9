import CMicroHTTPD
import Logging
import NavJSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Requests built from what libmicrohttpd parsed (and checked for NUL bytes), responses queued,
// whole or streamed.

// MARK: - Building requests, queueing responses

/// Fills in `pending` from what MHD parsed, and checks the head's framing.
///
/// - Returns: what is wrong with the head, nil when nothing is: a NUL byte in the request line
///   or a header (below), a method that is not a token or a control byte or space in the target, a line ended by a bare LF or a CR inside a value, or ambiguous framing
///   (``FramingFault/check(_:http10:badName:)``). MHD parses the head
///   in place, ending each piece with a NUL, and hands over C strings: a NUL the client sent
///   silently cuts the method, the URI or a header value short (`DELETE /s/{id}\0/screens/…`
///   reached `DELETE /s/{id}`). So the pieces are checked to lie exactly where MHD put them:
///   the URI's length as measured before MHD cut it up must reach the HTTP version, and each
///   header must start where the line before it ended (see ``HeadCheck``).
func read(
    _ pending: PendingRequest,
    connection: OpaquePointer,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?
) -> FramingFault? {
    var values = ConnectionValues()
    let requestLineIsClean = HeadCheck.requestLine(method: method, url: url, version: version, uriLength: pending.uriLength)
    if requestLineIsClean, let version {
        // The request line ends right after the eight bytes of `HTTP/1.1`.
        values.check = HeadCheck(cursor: UnsafeRawPointer(version) + 8)
    }
    withUnsafeMutablePointer(to: &values) { pointer in
        _ = MHD_get_connection_values_n(connection, navd_mhd_headers_and_arguments, collectValue, UnsafeMutableRawPointer(pointer))
    }
    pending.request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: values.query,
        repeatedQuery: values.repeatedQuery,
        headers: values.headers,
        body: []
    )
    pending.contentLength = values.headers["content-length"].flatMap { Int($0) }
    let headEnd = method.map { UnsafeRawPointer($0) + navd_mhd_request_header_size(connection) }
    // MHD answers a request line it cannot split (a NUL in the version among them) itself, so
    // a method or target that is not where MHD put it holds a NUL byte.
    guard requestLineIsClean, let method, let version, let headEnd else {
        return .malformed(reason: "the method or the request target holds a NUL byte")
    }
    guard let check = values.check, check.endsHead(at: headEnd) else {
        // A folded header (a line starting with a blank, obsolete since RFC 7230) moves what MHD
        // parsed as a NUL in a header does, and the check cannot tell which: the answer names both.
        return .malformed(reason: "a header holds a NUL byte or is folded over several lines")
    }
    // A target in absolute-form routes by its path (RFC 9112 §3.2.2).
    switch FramingFault.absoluteFormPath(pending.request.path) {
    case .path(let path)?: pending.request.path = path
    case .refused(let fault)?: return fault
    case nil: break
    }
    // The request line: a method is a token, a target holds no control byte and no space
    // (RFC 9112 §3). MHD splits the line at spaces only (the version at the last one) and keeps
    // a bare CR or a tab in either piece, where a proxy may end the line or the piece instead.
    if pending.uriHasStrayByte || !FramingFault.isToken(UnsafeRawBufferPointer(start: method, count: strlen(method))) {
        return .malformed(
            reason: "the request line holds a byte a method or target may not (a space, a bare CR, a tab, a control character)")
    }
    // MHD ends a line at a bare LF too, and keeps a bare CR inside a value: a proxy that ends
    // lines otherwise would see other fields (RFC 9112 §2.2).
    if check.bareLineFeed || headEnd - check.cursor != 4 {
        return .malformed(reason: "a line of the head ends with a bare LF, not CRLF")
    }
    if values.bareCarriageReturn {
        return .malformed(reason: "a header value holds a CR that does not end its line")
    }
    return FramingFault.check(values.headers, http10: strcmp(version, "HTTP/1.0") == 0, badName: values.badName)
}

/// What ``collectValue(_:_:_:_:_:_:)`` gathers from one request's header fields and query.
struct ConnectionValues {
    /// Most clients send fewer than eight fields: one allocation, no regrowth.
    package var headers = HTTPHeaders(reservingCapacity: 8)
    package var query: [String: String] = [:]
    /// The first query argument's name seen twice.
    package var repeatedQuery: String?
    /// Follows the header lines through MHD's buffer; nil once one is found out of place.
    package var check: HeadCheck?
    /// A header field's name is not a token (``FramingFault/isToken(_:)``).
    package var badName = false
    /// A header field's value holds a CR, which MHD keeps in it (only CRLF and LF end a line).
    package var bareCarriageReturn = false
}

/// Checks that the request's head, as MHD left it in its read buffer, holds no NUL byte the
/// client sent (libmicrohttpd 0.9.75, `connection.c`).
///
/// MHD reads the head into one buffer and parses it in place: the space after the method, the
/// space before the version, each line end (CR and LF, or a bare LF) and each header's colon
/// become NULs, and the method, URI, header names and values it hands over are C strings into
/// that buffer, measured with `strlen`. So with no NUL from the client every piece lies exactly
/// where the one before it ended plus MHD's own NULs; a NUL from the client ends a piece early,
/// and the next piece is then not where it should be. Only pointers MHD handed over are
/// compared, and bytes are read only between two of them that are a few bytes apart, so a
/// piece MHD moved (a folded header line, which this check refuses too; RFC 9112 §5.2 allows
/// that) is never followed far. A NUL sent right before a bare LF is the one case left: it reads
/// exactly like the CR of a CRLF, and ends nothing early.
struct HeadCheck {
    /// Where the current line's content ended: its line end starts here.
    package var cursor: UnsafeRawPointer
    /// A header line followed a line end of one NUL: a bare LF, not CRLF.
    package var bareLineFeed = false

    /// The request line: the method ends at the NUL MHD wrote for the first space (any further
    /// spaces MHD skipped follow it), the URI starts there, and its length measured before MHD
    /// cut it up reaches the NUL MHD wrote for the space before the version.
    static func requestLine(
        method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uriLength: Int
    ) -> Bool {
        guard let method, let url, let version, uriLength >= 0 else { return false }
        let methodStart = UnsafeRawPointer(method)
        let uriStart = UnsafeRawPointer(url)
        let versionStart = UnsafeRawPointer(version)
        guard methodStart < uriStart, uriStart < versionStart else { return false }
        var position = methodStart + strlen(method)
        guard position < uriStart, position.load(as: UInt8.self) == 0 else { return false }
        position += 1
        while position < uriStart {
            guard position.load(as: UInt8.self) == UInt8(ascii: " ") else { return false }
            position += 1
        }
        return uriStart + uriLength + 1 == versionStart
    }

    /// Whether a header line whose name starts at `name` (`nameSize` bytes) and whose value
    /// starts at `value` follows the line that ended at `cursor`; moves past its value if so.
    package mutating func follows(name: UnsafeRawPointer, nameSize: Int, value: UnsafeRawPointer, valueSize: Int) -> Bool {
        // One line end: CRLF (two NULs) or a bare LF (one).
        guard name > cursor, name - cursor <= 2 else { return false }
        if name - cursor == 1 { bareLineFeed = true }
        var position = cursor
        while position < name {
            guard position.load(as: UInt8.self) == 0 else { return false }
            position += 1
        }
        // The name, then the NUL that was its colon, then the blanks MHD skipped.
        position = name + nameSize
        guard position < value, position.load(as: UInt8.self) == 0 else { return false }
        position += 1
        while position < value {
            let byte = position.load(as: UInt8.self)
            guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") else { return false }
            position += 1
        }
        cursor = value + valueSize
        return true
    }

    /// Whether the last line's end and the blank line (each CRLF or LF: two to four NULs) are
    /// all that lies between `cursor` and `end`, where MHD says the head ends.
    func endsHead(at end: UnsafeRawPointer) -> Bool {
        guard end > cursor, end - cursor >= 2, end - cursor <= 4 else { return false }
        var position = cursor
        while position < end {
            guard position.load(as: UInt8.self) == 0 else { return false }
            position += 1
        }
        return true
    }
}

/// `MHD_KeyValueIteratorN` adding a header field or query argument to the
/// ``ConnectionValues`` at `cls`. Header names are lowercased as they are copied;
/// a query key without `=` has the empty string as its value.
func collectValue(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else {
        return .YES
    }
    let values = cls.assumingMemoryBound(to: ConnectionValues.self)
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    if kind == .HEADER_KIND {
        let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
        if values.pointee.check != nil, let value,
            values.pointee.check?.follows(
                name: UnsafeRawPointer(key), nameSize: keySize, value: UnsafeRawPointer(value), valueSize: valueSize) != true
        {
            values.pointee.check = nil
        }
        if !FramingFault.isToken(name) { values.pointee.badName = true }
        if let value, valueSize > 0, memchr(value, 0x0D, valueSize) != nil { values.pointee.bareCarriageReturn = true }
        values.pointee.headers.add(name: name, text)
    } else {
        // `?&&a=1` and `?=x`: an argument without a name names no parameter, and is let be as an
        // unknown one is (two of them are not a parameter given twice).
        guard keySize > 0 else { return .YES }
        let key = queryText(name)
        let text = queryText(UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize))
        if values.pointee.query.updateValue(text, forKey: key) != nil, values.pointee.repeatedQuery == nil {
            values.pointee.repeatedQuery = key
        }
    }
    return .YES
}

/// A query argument's name or value with its `%XX` escapes decoded (MHD has already turned `+`
/// into spaces): leniently, as forms are written: a `%` not followed by two hex digits stays as
/// it is, invalid UTF-8 is repaired.
func queryText(_ bytes: UnsafeRawBufferPointer) -> String {
    PercentDecoding.decode(bytes.assumingMemoryBound(to: UInt8.self), strict: false) ?? ""
}

/// Queues `response` on `connection` (`MHD_queue_response`), copying its body.
func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: ServerContext) -> MHD_Result {
    var status = response.status
    if !(100...599).contains(status) {
        context.logger.error("handler answered an invalid HTTP status; sending 500", metadata: ["status": "\(status)"])
        status = 500
    }
    let mhdResponse: OpaquePointer?
    if let stream = response.stream {
        mhdResponse = streamResponse(stream, on: connection, context: context)
    } else {
        mhdResponse = response.body.withUnsafeBytes { body in
            navd_mhd_response_copy(body.count, body.baseAddress)
        }
    }
    guard let mhdResponse else {
        context.logger.error("creating the MHD response failed; dropping the connection")
        return .NO
    }
    defer { MHD_destroy_response(mhdResponse) }

    for (name, value) in response.headers {
        // `withCString` lends a native string's own NUL-terminated storage: no C string copies.
        let added = name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } }
        if added != .YES {
            context.logger.debug("MHD_add_response_header refused a header", metadata: ["header": "\(name)"])
        }
    }
    if context.draining.load(ordering: .relaxed),
        !response.headers.contains(where: { $0.0.lowercased() == "connection" })
    {
        _ = MHD_add_response_header(mhdResponse, "Connection", "close")
    }
    let queued = MHD_queue_response(connection, UInt32(status), mhdResponse)
    if queued != .YES {
        context.logger.error("MHD_queue_response failed; dropping the connection", metadata: ["status": "\(status)"])
    }
    return queued
}

// MARK: - Streamed responses

/// What a streamed response's callbacks need: the stream, and the server context that lists it.
final class StreamBinding {
    let stream: ResponseStream
    let context: ServerContext

    init(stream: ResponseStream, context: ServerContext) {
        self.stream = stream
        self.context = context
    }
}

/// The block `MHD_create_response_from_callback` allocates with each streamed response, for as
/// long as the stream lasts (an idle watcher's whole life). MHD reads a chunked body (HTTP/1.1)
/// straight into the connection's own write buffer and never uses this block; only an HTTP/1.0
/// client's body passes through it, a block per call of ``streamRead``. So it is small: at 16 KiB
/// it was a 16 KiB allocation per watcher, at least a page of it resident; with the stream's
/// buffer keeping its capacity, 3.6 KiB of an idle watcher's 22.8 (BENCHMARKS.md, "Live sessions").
let streamBlockSize = 1024

/// An MHD response of unknown size (sent chunked) that reads `stream`; the binding is retained
/// until MHD frees the response (``streamFreed``).
func streamResponse(_ stream: ResponseStream, on connection: OpaquePointer, context: ServerContext) -> OpaquePointer? {
    let binding = Unmanaged.passRetained(StreamBinding(stream: stream, context: context))
    guard
        let response = MHD_create_response_from_callback(
            navd_mhd_size_unknown, streamBlockSize, streamRead, binding.toOpaque(), streamFreed)
    else {
        binding.release()
        return nil
    }
    stream.attach(to: connection)
    context.opened(stream)
    context.hangups?.watch(socket: navd_mhd_connection_socket(connection), stream)
    return response
}

/// `MHD_ContentReaderCallback`: the stream's next bytes; with none yet, the stream has
/// suspended the connection and 0 is returned (MHD calls again once a write resumes it).
func streamRead(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeUnretainedValue()
    switch binding.stream.read(into: buffer, capacity: capacity) {
    case .bytes(let count): return count
    case .wait: return 0
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .failed: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the connection is closed
    }
}

/// `MHD_ContentReaderFreeCallback`: MHD is done with the response (sent, failed, or the client
/// went away): the stream is closed and forgotten.
func streamFreed(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls)
    let bound = binding.takeUnretainedValue()
    bound.context.closed(bound.stream)
    bound.context.hangups?.forget(bound.stream)
    bound.stream.detach()
    binding.release()
}
