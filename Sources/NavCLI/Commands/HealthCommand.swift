import ArgumentParser
import NavHTTP

#if canImport(Glibc)
import Glibc
#endif

/// `navd health [--url URL]`: exit 0 when the URL answers 200 (for container health checks).
/// Without `--url` it asks `/healthz` at the address `navd serve` listens on by the same
/// environment (`NAVD_LISTEN`), so a HEALTHCHECK follows a changed listen address by itself.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 if the daemon's /healthz answers 200, 1 otherwise."
    )

    @Option(help: "The health URL (http only). (default: /healthz at NAVD_LISTEN, 0.0.0.0 and :: asked on loopback; else http://127.0.0.1:8080/healthz)")
    var url: String?

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Int = 3

    func run() throws {
        let url = url ?? Self.defaultURL(listen: Environment.current["NAVD_LISTEN"])
        do {
            let status = try HTTPProbe.get(url, timeout: timeout)
            guard status == 200 else {
                print("unhealthy: \(url) answered \(status)")
                throw ExitCode(1)
            }
            print("ok")
        } catch let error as HTTPProbe.Failure {
            print("unhealthy: \(error.message)")
            throw ExitCode(1)
        }
    }
}

extension HealthCommand {
    /// `/healthz` on the address `navd serve` would listen on with `listen` (`NAVD_LISTEN`): every
    /// interface (`0.0.0.0`, `:PORT`, `[::]`) is asked on loopback.
    static func defaultURL(listen: String?) -> String {
        guard let listen, !listen.isEmpty, let address = try? ListenAddress.parse(listen) else {
            return "http://127.0.0.1:8080/healthz"
        }
        let host = switch address.family {
        case .ipv4: address.bytes.allSatisfy { $0 == 0 } ? "127.0.0.1" : address.numericHost
        case .ipv6: address.isIPv6Any ? "[::1]" : "[\(address.numericHost)]"
        }
        return "http://\(host):\(address.port)/healthz"
    }
}

/// A minimal blocking HTTP/1.1 GET over a TCP socket: no Foundation networking in the image.
enum HTTPProbe {
    struct Failure: Error {
        var message: String
    }

    static func get(_ url: String, timeout: Int) throws -> Int {
        guard url.hasPrefix("http://") else { throw Failure(message: "only http:// URLs are supported") }
        let rest = url.dropFirst("http://".count)
        let hostPort = rest.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        let path = rest.dropFirst(hostPort.count).isEmpty ? "/" : String(rest.dropFirst(hostPort.count))
        // `host:port`, `[v6]:port`, or a host alone (port 80).
        let hasPort = hostPort.hasPrefix("[") ? hostPort.contains("]:") : hostPort.contains(":")
        guard let address = try? ListenAddress.parse(hasPort ? hostPort : hostPort + ":80") else {
            throw Failure(message: "cannot read the address \(hostPort)")
        }
        let fd = socket(address.family == .ipv4 ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(message: "socket() failed") }
        defer { close(fd) }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let connected = address.withSocketAddress { connect(fd, $0, $1) }
        guard connected == 0 else { throw Failure(message: "cannot connect to \(hostPort)") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(hostPort)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure(message: "cannot send the request")
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard received > 12 else { throw Failure(message: "no answer within \(timeout)s") }
        let statusLine = String(decoding: buffer[0..<received], as: UTF8.self).split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(message: "not an HTTP answer") }
        return status
    }
}
