import NavJSON
import NavWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A small blocking HTTP/1.1 client of a navd daemon, over a TCP socket: what the CLI driver and
/// `navd replay` send. One connection per request (`Connection: close`); a streamed answer (the
/// event stream) is handed over as it arrives. No Foundation networking: its URLSession does not
/// stream on Linux, and the daemon's image carries none of it.
package struct DaemonClient {
    /// Why no answer came: the daemon is down, unreachable or not speaking HTTP.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// A usage problem with the URL itself.
    package struct BadURL: Error, CustomStringConvertible {
        package var description: String
    }

    package struct Answer {
        package var status: Int
        var headers: [(name: String, value: String)]
        package var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body as JSON, read with the bound of what navd writes (a view nests a client's
        /// values under screens and tab bars), not the bound navd puts on what clients send.
        package var json: JSONValue? { try? JSONValue(parsing: body, maximumDepth: JSONValue.maximumViewDepth) }
    }

    let host: String
    let port: UInt16
    /// The URL's path, without a trailing slash, put before every request's path.
    package let basePath: String
    package let base: String
    /// Seconds to wait for a connection and for each read (0: no limit).
    package var timeout: Int

    /// - Throws: ``BadURL`` for anything but `http://host[:port][/path]`.
    package init(url: String, timeout: Int = 30) throws(BadURL) {
        guard url.hasPrefix("http://") else {
            throw BadURL(description: "the URL must start with http:// (navd speaks plain HTTP; put TLS in front of it): '\(url)'")
        }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var path = String(rest.dropFirst(authority.count))
        while path.hasSuffix("/") { path.removeLast() }
        var hostText = String(authority)
        var portNumber: UInt16 = 80
        if hostText.hasPrefix("[") {
            guard let close = hostText.firstIndex(of: "]") else { throw BadURL(description: "unclosed '[' in '\(url)'") }
            let after = hostText[hostText.index(after: close)...]
            if after.hasPrefix(":") {
                guard let number = UInt16(after.dropFirst()) else { throw BadURL(description: "bad port in '\(url)'") }
                portNumber = number
            }
            hostText = String(hostText[hostText.index(after: hostText.startIndex)..<close])
        } else if let colon = hostText.lastIndex(of: ":") {
            guard let number = UInt16(hostText[hostText.index(after: colon)...]) else { throw BadURL(description: "bad port in '\(url)'") }
            portNumber = number
            hostText = String(hostText[..<colon])
        }
        guard !hostText.isEmpty else { throw BadURL(description: "no host in '\(url)'") }
        host = hostText
        port = portNumber
        basePath = path
        base = url
        self.timeout = timeout
    }

    /// Sends one request and reads the whole answer.
    package func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws(Unavailable)
        -> Answer
    {
        let connection = try open()
        defer { close(connection) }
        try write(request(method, path, headers: headers, body: body), to: connection)
        var reader = ResponseReader(socket: connection)
        let head = try Self.head(&reader, method: method, describing: "\(method) \(path)")
        return Answer(
            status: head.status, headers: head.headers, body: try Self.reading { () throws(ResponseReader.Failure) in try reader.body() })
    }

    /// Sends a GET whose answer streams: when the daemon answers 200, `onBody` gets each piece of
    /// the body as it comes, until the daemon ends it or `onBody` returns false, and the result is
    /// nil; any other answer is read whole and returned.
    package func stream(_ path: String, headers: [(String, String)], onBody: ([UInt8]) -> Bool) throws(Unavailable) -> Answer? {
        let connection = try open()
        defer { close(connection) }
        try write(request("GET", path, headers: headers, body: nil), to: connection)
        var reader = ResponseReader(socket: connection)
        let head = try Self.head(&reader, method: "GET", describing: "GET \(path)")
        guard head.status == 200 else {
            return Answer(
                status: head.status, headers: head.headers,
                body: try Self.reading { () throws(ResponseReader.Failure) in try reader.body() })
        }
        while let piece = try Self.reading({ () throws(ResponseReader.Failure) in try reader.nextPiece() }), onBody(piece) {}
        return nil
    }

    private static func head(_ reader: inout ResponseReader, method: String, describing request: String) throws(Unavailable) -> ResponseHead
    {
        let head = try reading { () throws(ResponseReader.Failure) in try reader.head(method: method) }
        guard let head else { throw Unavailable(description: "the daemon closed the connection without answering \(request)") }
        return head
    }

    /// A read of the answer, its failure told as the daemon being unavailable.
    private static func reading<T>(_ read: () throws(ResponseReader.Failure) -> T) throws(Unavailable) -> T {
        do {
            return try read()
        } catch {
            throw Unavailable(description: error.description)
        }
    }

    private func request(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8]?) -> [UInt8] {
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head =
            "\(method) \(basePath)\(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\nUser-Agent: navd-cli/\(NavdVersion.text)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Connects to the first address of the host that accepts.
    private func open() throws(Unavailable) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let looked = getaddrinfo(host, String(port), &hints, &list)
        guard looked == 0, let first = list else {
            throw Unavailable(description: "cannot resolve \(host): \(String(cString: gai_strerror(looked)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = 0
        var current: UnsafeMutablePointer<addrinfo>? = first
        while let address = current {
            current = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            var limit = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            if connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            close(fd)
        }
        throw Unavailable(description: "cannot connect to \(base): \(String(cString: strerror(lastError)))")
    }

    private func write(_ bytes: [UInt8], to fd: Int32) throws(Unavailable) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Unavailable(description: "\(base) closed the connection while the request was sent") }
            sent += count
        }
    }
}
