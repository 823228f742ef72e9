import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP proxy in front of a navd that a test can break: ``cut()`` closes every
/// connection through it (a restarted proxy or load balancer), ``freeze()`` silently stops
/// forwarding on them (a dead peer: nothing more arrives, nothing is closed), and ``hold()``
/// keeps new connections waiting, unanswered, until ``release()``.
final class CuttableProxy: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private final class Link: Sendable {
        let client: Int32
        let upstream: Int32
        let frozen = Atomic<Bool>(false)
        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }
    }

    private struct State {
        var links: [Link] = []
        var held: [Int32] = []
        var holding = false
        var accepted = 0
        var closed = false
    }

    let port: Int
    private let target: Int
    private let listener: Int32
    private let state = Mutex(State())

    init(to targetPort: Int) throws {
        target = targetPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw Failure(description: "cannot listen: \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }

    /// Closes every connection open now (both sides).
    func cut() {
        // Under the lock: a link's descriptors are closed only after it left the list.
        state.withLock { state in
            for link in state.links {
                shutdown(link.client, Int32(SHUT_RDWR))
                shutdown(link.upstream, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops forwarding on every connection open now, in both directions, without closing
    /// them: bytes are read and dropped, as on a dead network path.
    func freeze() {
        for link in state.withLock({ $0.links }) { link.frozen.store(true, ordering: .relaxed) }
    }

    /// New connections are accepted but wait, unanswered, until ``release()``.
    func hold() {
        state.withLock { $0.holding = true }
    }

    func release() {
        let waiting = state.withLock { state in
            state.holding = false
            defer { state.held.removeAll() }
            return state.held
        }
        for client in waiting { forward(client) }
    }

    /// Stops accepting and closes every connection.
    func close() {
        let wasOpen = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard wasOpen else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
        let waiting = state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        for client in waiting { Glibc.close(client) }
    }

    deinit {
        close()
        Glibc.close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let holding = state.withLock { state in
                state.accepted += 1
                if state.holding { state.held.append(client) }
                return state.holding
            }
            if !holding { forward(client) }
        }
    }

    private func forward(_ client: Int32) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: target)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard upstream >= 0, connected else {
            Glibc.close(client)
            if upstream >= 0 { Glibc.close(upstream) }
            return
        }
        let link = Link(client: client, upstream: upstream)
        state.withLock { $0.links.append(link) }
        let done = Atomic<Int>(0)
        for (from, to) in [(client, upstream), (upstream, client)] {
            let thread = Thread { [self] in
                pump(from: from, to: to, link: link)
                // Either direction ending ends the connection; the second to finish closes.
                shutdown(to, Int32(SHUT_RDWR))
                shutdown(from, Int32(SHUT_RDWR))
                if done.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                    state.withLock { $0.links.removeAll { $0 === link } }
                    Glibc.close(client)
                    Glibc.close(upstream)
                }
            }
            thread.start()
        }
    }

    private func pump(from: Int32, to: Int32, link: Link) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            if link.frozen.load(ordering: .relaxed) { continue }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                sent += written
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
