import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `navd health --url URL`: exit 0 when the URL answers 200 (for container health checks).
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 if the daemon's /healthz answers 200, 1 otherwise."
    )

    @Option(help: "The health URL (http only).")
    var url: String = "http://127.0.0.1:8080/healthz"

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Int = 3

    func run() throws {
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
        let parts = hostPort.split(separator: ":")
        let host = parts.first.map(String.init) ?? "127.0.0.1"
        let port = parts.count > 1 ? UInt16(parts[1]) ?? 80 : 80

        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(message: "socket() failed") }
        defer { close(fd) }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            throw Failure(message: "host must be an IPv4 address or localhost")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
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
