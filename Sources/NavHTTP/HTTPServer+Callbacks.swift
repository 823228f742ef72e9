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

// The C callbacks libmicrohttpd calls on its pool threads for one running `HTTPServer`.

// MARK: - C callbacks
//
// Top-level functions, so they are nonisolated and capture nothing: MHD calls
// them on its own threads.

/// `MHD_AccessHandlerCallback`: called once when a request's headers are in,
/// then once per chunk of body, then once with `*upload_data_size == 0`.
///
/// MHD 0.9.75 accepts `MHD_queue_response` only on the first call (and then
/// closes the connection after the response, reading no body) or on the last
/// one; a response queued while the body streams in is refused.
func accessHandler(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestState else {
        return .NO  // MHD always passes these; nothing sensible to answer otherwise
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    let existing: UnsafeMutableRawPointer
    if let made = requestState.pointee {
        existing = made
    } else {
        // `uriLogged` makes it for every request; this is only a fallback.
        existing = Unmanaged.passRetained(PendingRequest(uriLength: -1)).toOpaque()
        requestState.pointee = existing
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

    if !pending.started {
        pending.started = true
        context.inFlight.add(1, ordering: .relaxed)
        if let fault = read(pending, connection: connection, url: url, method: method, version: version) {
            return refuse(pending, fault, context: context, connection: connection)
        }
        pending.maxBody = context.handler.bodyLimit(for: pending.request, configured: context.maxBody)
        if let declared = pending.contentLength, declared > pending.maxBody {
            // Queued on the first call, like the answer above: MHD then reads
            // none of the body and closes the connection after the response,
            // which is what a body that will not be read needs.
            return answerTooLarge(pending, context: context, connection: connection)
        }
        // Otherwise only set up the request: a response queued now would make
        // MHD close the connection after it (no keep-alive).
        return .YES
    }

    let size = uploadDataSize.pointee
    uploadDataSize.pointee = 0  // every byte handed over is consumed, kept or not
    if pending.answered {
        // A deferred answer resumed the connection: MHD calls again, and the answer is queued now.
        if size == 0, let deferred = pending.deferred {
            return queue(deferred, for: pending, on: connection, context: context)
        }
        return .YES
    }
    if size > 0 {
        if pending.discarded > 0 {
            pending.discarded += size
            guard pending.discarded <= pending.maxBody + discardAllowance else {
                context.logger.info(
                    "dropping a connection whose chunked body goes on far past the limit",
                    metadata: ["limit": "\(pending.maxBody)", "received": "\(pending.discarded)"]
                )
                return .NO
            }
            return .YES
        }
        guard pending.request.body.count + size <= pending.maxBody else {
            // Too large, as a chunked body or one longer than it announced: MHD
            // will not take a response before the body has ended, so read the
            // rest, keep none of it, and answer then.
            pending.discarded = pending.request.body.count + size
            pending.request.body = []
            return .YES
        }
        if let uploadData {
            pending.request.body.append(
                contentsOf: UnsafeRawBufferPointer(start: UnsafeRawPointer(uploadData), count: size)
            )
        }
        return .YES
    }
    if pending.discarded > 0 {
        return answerTooLarge(pending, context: context, connection: connection)
    }
    pending.answered = true
    guard startAnswering(connection, context: context) else { return .NO }
    // Moved out, not copied: once answered, nothing reads the pending request again.
    var request = HTTPRequest(method: "", path: "")
    swap(&request, &pending.request)
    let response = context.handler.handle(consume request)
    if let deferred = response.deferred {
        pending.deferred = deferred
        context.waiting(deferred)
        context.hangups?.watch(socket: navd_mhd_connection_socket(connection), deferred)
        return queue(deferred, for: pending, on: connection, context: context)
    }
    return queue(response, on: connection, context: context)
}

/// Queues a deferred answer if it has been given, or suspends the connection until it is; closes
/// the connection of a client that hung up meanwhile.
func queue(_ deferred: DeferredResponse, for pending: PendingRequest, on connection: OpaquePointer, context: ServerContext) -> MHD_Result {
    switch deferred.answerOrSuspend(connection) {
    case .suspended:
        return .YES
    case .answer(let response):
        pending.deferred = nil
        context.answered(deferred)
        context.hangups?.forget(deferred)
        return queue(response, on: connection, context: context)
    case .hungUp:
        pending.deferred = nil
        context.answered(deferred)
        return .NO
    }
}

/// Queues the handler's answer to a request whose head is refused (``FramingFault``), on the
/// access handler's first call: MHD 0.9.75 then sends it, reads none of the body and closes
/// the connection (`MHD_queue_response` sets `discard_request` for an answer queued this
/// early), so bytes sent after the head, whatever a proxy made of them, are never read as a
/// request. `Connection: close` is set here whatever the handler answered, so that the
/// answer says so itself rather than by MHD's leave.
func refuse(
    _ pending: PendingRequest,
    _ fault: FramingFault,
    context: ServerContext,
    connection: OpaquePointer
) -> MHD_Result {
    pending.answered = true
    guard startAnswering(connection, context: context) else { return .NO }
    var response =
        switch fault {
        case .malformed(let reason): context.handler.malformed(pending.request, reason: reason)
        case .unsupportedCoding(let coding): context.handler.unsupportedTransferCoding(pending.request, coding: coding)
        }
    response.closesConnection()
    return queue(response, on: connection, context: context)
}

/// Queues the handler's answer to a body over `maxBody`, the body left out.
func answerTooLarge(
    _ pending: PendingRequest,
    context: ServerContext,
    connection: OpaquePointer
) -> MHD_Result {
    pending.answered = true
    guard startAnswering(connection, context: context) else { return .NO }
    pending.request.body = []
    let response = context.handler.bodyTooLarge(pending.request, limit: pending.maxBody)
    return queue(response, on: connection, context: context)
}

/// The request is in (or will be read no further): it is answered however long the handler
/// takes, out of reach of the request deadline. - Returns: false when the deadline's watchdog
/// shut the connection first: the request is then dropped unseen (`MHD_NO`), so nothing is
/// changed for a client that can no longer hear the answer.
@inline(__always)
func startAnswering(_ connection: OpaquePointer, context: ServerContext) -> Bool {
    guard context.deadlines != nil, let tracked = RequestDeadlines.tracked(connection) else { return true }
    return tracked.answering()
}

/// `MHD_RequestCompletedCallback`: releases the request's state, whether it was
/// answered, timed out, or its client went away.
func requestCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    // The answer is out: the connection's next request is awaited from now on.
    if let connection, let cls, Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines != nil {
        RequestDeadlines.tracked(connection)?.awaitRequest()
    }
    guard let requestState, let existing = requestState.pointee else {
        return
    }
    requestState.pointee = nil
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing)
    // A deferred answer whose connection MHD closed before queueing it (the client went away):
    // nothing will queue it now.
    if let deferred = pending.takeUnretainedValue().deferred, let cls {
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        context.answered(deferred)
        context.hangups?.forget(deferred)
        pending.takeUnretainedValue().deferred = nil
    }
    // A request MHD refused before the access handler saw it was never counted.
    if pending.takeUnretainedValue().started, let cls {
        Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            .inFlight.subtract(1, ordering: .releasing)
    }
    pending.release()
}

/// The URI log callback (`MHD_OPTION_URI_LOG_CALLBACK`): called once the request line is
/// parsed, while the URI is still whole (MHD has only ended it where the HTTP version
/// begins), so its length up to a first NUL is the length of the URI exactly when it holds
/// no NUL. It is also the one place the target is seen as sent, before MHD percent-decodes its
/// path: a control byte in it (a bare CR or a tab) or a space is the client's framing, not
/// data, and is marked for ``read(_:connection:url:method:version:)`` to refuse. Its result is
/// the request's `*con_cls`; ``requestCompleted`` releases it.
func uriLogged(
    _ cls: UnsafeMutableRawPointer?,
    _ uri: UnsafePointer<CChar>?,
    _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let uri else { return Unmanaged.passRetained(PendingRequest(uriLength: -1)).toOpaque() }
    let length = strlen(uri)
    let raw = UnsafeRawBufferPointer(start: UnsafeRawPointer(uri), count: length)
    // A space too: MHD takes the line's last space for the one before the version, where a
    // proxy may take the first and read another target and version.
    let pending = PendingRequest(uriLength: length, uriHasStrayByte: raw.contains { $0 <= 0x20 || $0 == 0x7F })
    return Unmanaged.passRetained(pending).toOpaque()
}

/// `MHD_NotifyConnectionCallback`: registers each connection with the request deadline's
/// watchdog when MHD has accepted it, and unregisters it when MHD has closed it. MHD calls
/// this on the connection's own pool thread, and calls `CLOSED` before it closes the socket
/// (`MHD_cleanup_connections`, daemon.c), so a registered socket is always still open.
func connectionNotified(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext,
        let deadlines = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines
    else {
        return
    }
    if code == navd_mhd_connection_started {
        let socket = navd_mhd_connection_socket(connection)
        guard socket != navd_mhd_invalid_socket else { return }
        socketContext.pointee = deadlines.register(socket: socket)
    } else if code == navd_mhd_connection_closed, let tracked = socketContext.pointee {
        socketContext.pointee = nil
        deadlines.unregister(tracked)
    }
}

/// `MHD_LogCallback`: MHD's error messages, formatted and sent to the logger.
func mhdLog(
    _ cls: UnsafeMutableRawPointer?,
    _ format: UnsafePointer<CChar>?,
    _ arguments: CVaListPointer?
) {
    guard let cls, let format, let arguments else {
        return
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    var buffer = [CChar](repeating: 0, count: 1024)
    let written = buffer.withUnsafeMutableBufferPointer { buffer in
        vsnprintf(buffer.baseAddress, buffer.count, format, arguments)
    }
    guard written > 0 else {
        return
    }
    let length = min(Int(written), buffer.count - 1)
    var message = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while let last = message.last, last.isWhitespace {
        message.removeLast()
    }
    if context.recordStartupMessage(message) {
        return
    }
    // Most of what MHD reports once running is caused by clients (bad
    // requests, resets); resource exhaustion is what an operator must see.
    let serious = ["limit", "thread", "accept", "memory", "allocate"].contains {
        message.lowercased().contains($0)
    }
    context.logger.log(level: serious ? .warning : .debug, "libmicrohttpd: \(message)")
}
