import ArgumentParser
import NavHTTP
import NavHTTPClient

/// `navd health [--url URL]`: exit 0 when the URL answers 200 (for container health checks).
/// Without `--url` it asks `/healthz` at the address `navd serve` listens on by the same
/// environment (`NAVD_LISTEN`), so a HEALTHCHECK follows a changed listen address by itself.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 if the daemon's /healthz answers 200, 1 otherwise."
    )

    @Option(
        help:
            "The health URL (http only). (default: /healthz at NAVD_LISTEN, 0.0.0.0 and :: asked on loopback; else http://127.0.0.1:8080/healthz)"
    )
    var url: String?

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Int = 3

    func run() throws {
        let url = url ?? Self.defaultURL(listen: Environment.current["NAVD_LISTEN"])
        do {
            let client = try DaemonClient(url: url, timeout: timeout)
            let status = try client.send("GET", client.basePath.isEmpty ? "/" : "").status
            guard status == 200 else {
                print("unhealthy: \(url) answered \(status)")
                throw ExitCode(1)
            }
            print("ok")
        } catch let error as DaemonClient.BadURL {
            print("unhealthy: \(error.description)")
            throw ExitCode(1)
        } catch let error as DaemonClient.Unavailable {
            print("unhealthy: \(error.description)")
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
        let host =
            switch address.family {
            case .ipv4: address.bytes.allSatisfy { $0 == 0 } ? "127.0.0.1" : address.numericHost
            case .ipv6: address.isIPv6Any ? "[::1]" : "[\(address.numericHost)]"
            }
        return "http://\(host):\(address.port)/healthz"
    }
}
