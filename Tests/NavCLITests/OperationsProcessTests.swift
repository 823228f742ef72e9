import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// navd run as an operator runs it: stopped by SIGTERM behind a load balancer, logging JSON to a
/// collector, listening where the container says, started with a mistake in its settings.
@Suite struct OperationsProcessTests {
    /// A load balancer polling `/readyz` sees 503 for the drain window while requests are still
    /// answered, then navd stops accepting and exits 0.
    @Test func sigtermDrainsReadinessWhileStillServing() throws {
        let navd = try DaemonHarness(arguments: ["--drain", "1500ms", "--shutdown-grace", "2s"])
        let session = try navd.createSession()
        #expect(try navd.request("GET", "/readyz").status == 200)

        navd.send(SIGTERM)
        let signalled = Date()
        var draining: Date?
        var lastServed = signalled
        var refusedAt: Date?
        while Date().timeIntervalSince(signalled) < 8 {
            guard let ready = try? navd.request("GET", "/readyz", validate: false) else {
                refusedAt = Date()
                break
            }
            if ready.status == 503 {
                if draining == nil { draining = Date() }
                #expect(try ready.json()["status"]?.string == "draining")
                // Everything else is still served meanwhile, sessions included. The drain may end
                // between any two requests of this loop: a refused one ends the loop as /readyz's does.
                guard let read = try? navd.request("GET", session.url, headers: ["Authorization": "Bearer \(session.token)"]),
                    let health = try? navd.request("GET", "/healthz")
                else {
                    refusedAt = Date()
                    break
                }
                #expect(read.status == 200)
                #expect(health.status == 200)
                lastServed = Date()
            } else {
                #expect(draining == nil, "/readyz answered \(ready.status) after it had answered 503")
            }
            usleep(50_000)
        }
        let drainStart = try #require(draining, "/readyz never answered 503 after SIGTERM: \(navd.log.suffix(2000))")
        #expect(
            drainStart.timeIntervalSince(signalled) < 0.5,
            "readiness turned 503 only \(drainStart.timeIntervalSince(signalled)) s after SIGTERM")
        #expect(
            lastServed.timeIntervalSince(signalled) > 1.0,
            "requests were served for only \(lastServed.timeIntervalSince(signalled)) s of the 1.5 s drain")
        let refused = try #require(refusedAt, "navd still answered 8 s after SIGTERM")
        #expect(
            refused.timeIntervalSince(signalled) >= 1.4,
            "navd stopped accepting after \(refused.timeIntervalSince(signalled)) s, before the drain ended")
        #expect(try navd.stop() == 0)
        #expect(navd.log.contains("drain_ms=1500"), "\(navd.log.suffix(2000))")
    }

    /// A second signal ends the drain at once (an operator who means it).
    @Test func aSecondSignalCutsTheDrainShort() throws {
        let navd = try DaemonHarness(arguments: ["--drain", "30s"])
        navd.send(SIGTERM)
        var waited = 0
        while (try? navd.request("GET", "/readyz", validate: false))?.status != 503, waited < 100 {
            usleep(20_000)
            waited += 1
        }
        let started = Date()
        navd.send(SIGINT)
        #expect(try navd.stop() == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(navd.log.contains("drain cut short"))
    }

    /// Every line of a JSON log is one object with the common fields, request lines included,
    /// whatever a client sent; a record whose cause spans lines (libpq's) is one line too.
    @Test func jsonLogsAreOneObjectALine() throws {
        let navd = try DaemonHarness(arguments: ["--log-format", "json", "--log-level", "debug"])
        let session = try navd.createSession()
        _ = try navd.request(
            "POST", session.url + "/navigate", headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "text/plain"],
            body: Array("x".utf8), validate: false)
        _ = try navd.raw(
            Array("G\u{1B}[1mT /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\"b\\c\r\nConnection: close\r\n\r\n".utf8), validate: false)
        #expect(try navd.stop() == 0)

        let lines = navd.log.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count >= 6, "\(navd.log)")
        var requests: [JSON] = []
        for line in lines {
            let record = try JSON(parsing: String(line))
            let fields = try #require(record.object, "not an object: \(line)")
            #expect(fields["ts"]?.string?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(line)")
            #expect(["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(fields["level"]?.string ?? ""), "\(line)")
            #expect(fields["logger"]?.string == "navd", "\(line)")
            #expect(fields["msg"]?.string != nil, "\(line)")
            if fields["msg"]?.string == "request" { requests.append(record) }
        }
        #expect(lines.contains { $0.contains(#""msg":"navd listening""#) })
        let create = try #require(requests.first { $0["route"]?.string == "/v1/sessions" })
        #expect(create["status"]?.int == 201)
        #expect(create["method"]?.string == "POST")
        #expect(requests.contains { $0["status"]?.int == 415 && $0["route"]?.string == "/v1/sessions/{id}/navigate" })
        let hostile = try #require(requests.first { $0["request_id"]?.string == #"a"b\c"# }, "\(navd.log)")
        #expect(hostile["method"]?.string == "G\u{1B}[1mT")
    }

    /// A store that cannot be reached at start-up: one record, on one line, exit 1.
    @Test func aStartFailureIsOneRecordOnOneLine() throws {
        for format in ["text", "json"] {
            let run = try CLIProcess.navd([
                "serve", "--listen", "127.0.0.1:0", "--log-format", format, "--store", "postgres://navd@127.0.0.1:1/navd?connect_timeout=2"
            ])
            #expect(run.status == 1)
            let lines = run.errors.split(separator: "\n")
            let failure = try #require(lines.first { $0.contains("navd cannot start") }, "\(run.errors)")
            #expect(failure.contains("127.0.0.1"), "\(failure)")
            #expect(!run.errors.contains("Error:"), "\(run.errors)")
            if format == "json" {
                for line in lines { #expect(throws: Never.self, "\(line)") { try JSON(parsing: String(line)) } }
            } else {
                #expect(lines.allSatisfy { $0.hasPrefix("ts=") }, "\(run.errors)")
            }
        }
    }

    /// A bad `--listen` is refused with `serve`'s usage, before the store is opened.
    @Test func aBadListenAddressIsRefusedBeforeTheStoreOpens() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("navd-listen-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        for listen in ["127.0.0.1", "::1:8080", "[::1]:99999", "no such host:80"] {
            let run = try CLIProcess.navd(["serve", "--listen", listen, "--store", "sqlite:\(folder.path)/navd.db"])
            #expect(run.status == 64, "\(listen): \(run.errors)")
            #expect(run.errors.contains("--listen must be HOST:PORT"), "\(run.errors)")
            #expect(run.errors.contains("Usage: navd serve"), "\(run.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path), "the store was opened")
    }

    /// `serve --help` says every option's default.
    @Test func serveHelpShowsEveryDefault() throws {
        // Lines joined, as the help wraps them anywhere.
        let help = try CLIProcess.navd(["serve", "--help"]).output.replacing(/\n {20,}/, with: " ")
        let options = help.components(separatedBy: "\n  --").dropFirst().map { "--" + $0 }.filter {
            !$0.hasPrefix("--help") && !$0.hasPrefix("--version")
        }
        #expect(options.count >= 20, "\(help)")
        for option in options {
            #expect(option.contains("default"), "no default in: \(option)")
        }
        for text in ["default 127.0.0.1:8080", "default 5s", "default 10s", "default text", "default 4"] {
            #expect(help.contains(text), "\(text)")
        }
    }

    /// IPv6 and host names, served and probed by `navd health`, which follows NAVD_LISTEN.
    @Test(arguments: ["[::1]", "localhost", ""])
    func listensOnIPv6AndNamesAndTheHealthCheckFollows(_ host: String) throws {
        let port = try DaemonHarness.freePort()
        let process = try ChildProcess(
            DaemonHarness.binary.path, ["serve", "--store", "memory", "--drain", "0"],
            environment: DaemonHarness.environment(adding: ["NAVD_LISTEN": "\(host):\(port)"]), directory: DaemonHarness.packageRoot.path
        )
        var healthy = false
        for _ in 0..<100 where !healthy {
            usleep(50_000)
            healthy = try Self.health(environment: ["NAVD_LISTEN": "\(host):\(port)"]).status == 0
        }
        #expect(healthy, "navd health never reached navd on \(host):\(port)")
        let explicit = try Self.health(arguments: ["--url", "http://\(host.isEmpty ? "127.0.0.1" : host):\(port)/healthz"])
        #expect(explicit.status == 0, "\(explicit.output)")
        process.send(SIGTERM)
        #expect(process.wait(seconds: 10) == .exited(0))
        #expect(try Self.health(environment: ["NAVD_LISTEN": "\(host):\(port)"]).status == 1)
    }

    static func health(arguments: [String] = [], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let run = try ChildProcess.run(
            DaemonHarness.binary.path, ["health", "--timeout", "2"] + arguments, environment: DaemonHarness.environment(adding: environment)
        )
        return (CLIProcess.status(run.termination), run.output)
    }
}
