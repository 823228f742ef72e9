#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NavJSON
import NavWire

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
    let basePath: String
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
    package func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws(Unavailable) -> Answer {
        let connection = try open()
        defer { close(connection) }
        try write(request(method, path, headers: headers, body: body), to: connection)
        var reader = Reader(socket: connection)
        let (status, answerHeaders) = try reader.head(describing: "\(method) \(path)")
        var bytes: [UInt8] = []
        try reader.body(headers: answerHeaders, method: method) { bytes += $0; return true }
        return Answer(status: status, headers: answerHeaders, body: bytes)
    }

    /// Sends a GET whose answer streams: when the daemon answers 200, `onBody` gets each piece of
    /// the body as it comes, until the daemon ends it or `onBody` returns false, and the result is
    /// nil; any other answer is read whole and returned.
    package func stream(_ path: String, headers: [(String, String)], onBody: ([UInt8]) -> Bool) throws(Unavailable) -> Answer? {
        let connection = try open()
        defer { close(connection) }
        try write(request("GET", path, headers: headers, body: nil), to: connection)
        var reader = Reader(socket: connection)
        let (status, answerHeaders) = try reader.head(describing: "GET \(path)")
        guard status == 200 else {
            var bytes: [UInt8] = []
            try reader.body(headers: answerHeaders, method: "GET") { bytes += $0; return true }
            return Answer(status: status, headers: answerHeaders, body: bytes)
        }
        try reader.body(headers: answerHeaders, method: "GET", consume: onBody)
        return nil
    }

    private func request(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8]?) -> [UInt8] {
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(basePath)\(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\nUser-Agent: navd-cli/\(NavdVersion.text)\r\n"
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

    /// Reads an answer's head and body from a socket, de-chunking a chunked body.
    struct Reader {
        let socket: Int32
        var buffer: [UInt8] = []
        var ended = false

        init(socket: Int32) {
            self.socket = socket
        }

        /// Reads more bytes; false at the end of the stream.
        mutating func fill() throws(Unavailable) -> Bool {
            guard !ended else { return false }
            var chunk = [UInt8](repeating: 0, count: 16_384)
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                return true
            }
            if count == 0 {
                ended = true
                return false
            }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Unavailable(description: "no answer in time") }
            if errno == EINTR { return true }
            throw Unavailable(description: "reading the answer failed: \(String(cString: strerror(errno)))")
        }

        /// Bytes up to (not including) `separator`, consumed with it; nil at the end of the stream.
        mutating func take(until separator: [UInt8]) throws(Unavailable) -> [UInt8]? {
            var searched = 0
            while true {
                if buffer.count >= separator.count {
                    for start in max(0, searched - separator.count + 1)...(buffer.count - separator.count)
                    where buffer[start..<(start + separator.count)].elementsEqual(separator) {
                        let found = Array(buffer[..<start])
                        buffer.removeFirst(start + separator.count)
                        return found
                    }
                    searched = buffer.count
                }
                guard try fill() else { return nil }
            }
        }

        mutating func head(describing request: String) throws(Unavailable) -> (Int, [(name: String, value: String)]) {
            guard let head = try take(until: Array("\r\n\r\n".utf8)) else {
                throw Unavailable(description: "the daemon closed the connection without answering \(request)")
            }
            let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
            let statusParts = lines.first?.split(separator: " ") ?? []
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
                throw Unavailable(description: "not an HTTP answer to \(request)")
            }
            var headers: [(name: String, value: String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
                headers.append((String(line[..<colon]), String(value)))
            }
            return (status, headers)
        }

        /// Hands the body to `consume` piece by piece, until it ends or `consume` returns false.
        mutating func body(
            headers: [(name: String, value: String)], method: String, consume: ([UInt8]) -> Bool
        ) throws(Unavailable) {
            func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
            if method == "HEAD" { return }
            if header("transfer-encoding")?.lowercased().contains("chunked") == true {
                while true {
                    guard let sizeLine = try take(until: Array("\r\n".utf8)) else {
                        throw Unavailable(description: "the answer ended in the middle of its body")
                    }
                    let sizeText = String(decoding: sizeLine, as: UTF8.self).prefix { $0 != ";" }.trimmingSpaces
                    guard let size = Int(sizeText, radix: 16) else { throw Unavailable(description: "a malformed chunk in the answer") }
                    if size == 0 { return }
                    while buffer.count < size + 2 {
                        guard try fill() else { throw Unavailable(description: "the answer ended in the middle of a chunk") }
                    }
                    let piece = Array(buffer[..<size])
                    buffer.removeFirst(size + 2)
                    guard consume(piece) else { return }
                }
            } else if let length = header("content-length").flatMap({ Int($0) }) {
                while buffer.count < length {
                    guard try fill() else { throw Unavailable(description: "the answer ended before its Content-Length") }
                }
                _ = consume(Array(buffer[..<length]))
            } else {
                while true {
                    if !buffer.isEmpty {
                        guard consume(buffer) else { return }
                        buffer.removeAll()
                    }
                    guard try fill() else { return }
                }
            }
        }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
