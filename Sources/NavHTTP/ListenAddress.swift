#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The socket address a server listens on: an IPv4 or IPv6 address and a port, resolved once
/// from the text an operator wrote (`--listen`), before anything else is opened.
package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    package enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    /// The host as written (`""` for every interface), without brackets.
    package let host: String
    package let port: UInt16
    package let family: Family
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    package let bytes: [UInt8]

    /// `HOST:PORT`, `:PORT` (every IPv4 interface), `[IPV6]:PORT` or `NAME:PORT` → an address.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)`` when the text is not of that form, its port
    ///   is not a number up to 65535, or its host neither is an address nor resolves to one.
    package static func parse(_ text: String) throws(HTTPServerError) -> ListenAddress {
        guard let colon = text.lastIndex(of: ":") else { throw .invalidHost(text) }
        let portText = text[text.index(after: colon)...]
        guard let port = Self.port(portText) else { throw .invalidHost(text) }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { throw .invalidHost(text) }
            host = String(host.dropFirst().dropLast())
            guard host.contains(":") else { throw .invalidHost(text) }
        } else if host.contains(":") {
            // An IPv6 address must be bracketed, or its last group would read as the port.
            throw .invalidHost(text)
        }
        return try resolve(host: host, port: port)
    }

    /// `host` (an IPv4 or IPv6 address, `localhost`, a name, or `""` for every IPv4 interface)
    /// and `port` → an address; a name is looked up with `getaddrinfo`, and its first address taken.
    package static func resolve(host: String, port: UInt16) throws(HTTPServerError) -> ListenAddress {
        let literal = host.isEmpty ? "0.0.0.0" : host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            return ListenAddress(host: host, port: port, family: .ipv4, bytes: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return ListenAddress(host: host, port: port, family: .ipv6, bytes: withUnsafeBytes(of: v6) { Array($0) })
        }
        guard Self.isHostName(host) else { throw .invalidHost(host) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &found) == 0, let found else { throw .invalidHost(host) }
        defer { freeaddrinfo(found) }
        var entry: UnsafeMutablePointer<addrinfo>? = found
        // IPv4 first: a name that has both usually means either, and IPv4 works everywhere.
        var candidates: [ListenAddress] = []
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) }
                    }
                    candidates.append(ListenAddress(host: host, port: port, family: .ipv4, bytes: bytes))
                case AF_INET6:
                    let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
                    }
                    candidates.append(ListenAddress(host: host, port: port, family: .ipv6, bytes: bytes))
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        guard let chosen = candidates.first(where: { $0.family == .ipv4 }) ?? candidates.first else { throw .invalidHost(host) }
        return chosen
    }

    /// Whether this is `::` (every IPv6 interface), which navd opens dual-stack (IPv4 too).
    package var isIPv6Any: Bool { family == .ipv6 && bytes.allSatisfy { $0 == 0 } }

    /// The address as text, `127.0.0.1` or `::1`.
    package var numericHost: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family == .ipv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        guard written != nil else { return host }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `127.0.0.1:8080`, `[::1]:8080`.
    package var description: String {
        family == .ipv6 ? "[\(numericHost)]:\(port)" : "\(numericHost):\(port)"
    }

    /// Calls `body` with the C socket address (`sockaddr_in` or `sockaddr_in6`) and its length.
    package func withSocketAddress<T>(port overriding: UInt16? = nil, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> T) -> T {
        let port = (overriding ?? self.port).bigEndian
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
            return withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
            return withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    private static func port(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.utf8.count <= 8 else { return nil }
        var digits = text.utf8[...]
        if digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return UInt16(exactly: value)
    }

    /// Letters, digits, `-` and `.` (RFC 1123), at most 253 bytes.
    private static func isHostName(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 253
            && host.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
    }
}

extension ListenAddress {
    /// The same address with another port (the one the kernel picked for port 0).
    package func withPort(_ port: UInt16) -> ListenAddress {
        ListenAddress(host: host, port: port, family: family, bytes: bytes)
    }
}
