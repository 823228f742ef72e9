import NavHTTP
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavTestSupport

/// The settings an operator runs navd with in a container: where it listens, how it stops, how
/// it logs, how many threads and PostgreSQL connections it takes.
@Suite struct ServeOperationsSettingsTests {
    static func settings(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeSettings {
        try ServeSettings(try ServeCommand.parse(arguments), environment: environment)
    }

    @Test(arguments: [
        (":8080", "0.0.0.0", 8080, ListenAddress.Family.ipv4),
        ("0.0.0.0:80", "0.0.0.0", 80, .ipv4),
        ("[::1]:8080", "::1", 8080, .ipv6),
        ("[::]:9000", "::", 9000, .ipv6),
        ("localhost:7000", "127.0.0.1", 7000, .ipv4),
        ("[fe80::1]:1", "fe80::1", 1, .ipv6)
    ])
    func listenTakesEveryFormAnOperatorWrites(_ listen: String, _ host: String, _ port: Int, _ family: ListenAddress.Family) throws {
        let settings = try Self.settings(["--listen", listen])
        #expect(settings.host == host)
        #expect(Int(settings.port) == port)
        #expect(settings.listen.family == family)
    }

    /// A name is resolved when the settings are read, before any store opens.
    @Test func aHostNameIsResolvedToItsAddress() throws {
        let settings = try Self.settings([], environment: ["NAVD_LISTEN": "localhost:8081"])
        #expect(settings.host == "127.0.0.1")
        #expect(settings.listen.description == "127.0.0.1:8081")
        #expect(try Self.settings(["--listen", "[::1]:80"]).listen.description == "[::1]:80")
    }

    @Test func drainAndGraceHaveDefaultsAndTakeDurations() throws {
        let defaults = try Self.settings([])
        #expect(defaults.drainMilliseconds == 5000)
        #expect(defaults.shutdownGraceMilliseconds == 10_000)
        #expect(try Self.settings(["--drain", "0"]).drainMilliseconds == 0)
        #expect(try Self.settings(["--drain", "250ms", "--shutdown-grace", "1m"]).shutdownGraceMilliseconds == 60_000)
        #expect(try Self.settings(["--drain", "250ms"]).drainMilliseconds == 250)
        #expect(try Self.settings([], environment: ["NAVD_DRAIN": "2s", "NAVD_SHUTDOWN_GRACE": "3"]).drainMilliseconds == 2000)
        #expect(try Self.settings([], environment: ["NAVD_SHUTDOWN_GRACE": "3"]).shutdownGraceMilliseconds == 3000)
        for bad in ["-1s", "soon", "2h", "1.5s"] {
            #expect(throws: (any Error).self, "\(bad)") { try Self.settings(["--drain", bad]) }
            #expect(throws: (any Error).self, "\(bad)") { try Self.settings(["--shutdown-grace", bad]) }
        }
    }

    @Test func logFormatIsTextOrJSON() throws {
        #expect(try Self.settings([]).logFormat == .text)
        #expect(try Self.settings(["--log-format", "json"]).logFormat == .json)
        #expect(try Self.settings([], environment: ["NAVD_LOG_FORMAT": "json"]).logFormat == .json)
        #expect(throws: (any Error).self) { try Self.settings(["--log-format", "xml"]) }
    }

    /// The pool is a setting of its own: `--threads 64` no longer opens 65 connections.
    @Test func postgresConnectionsAreTheirOwnSetting() throws {
        #expect(try Self.settings(["--threads", "64"]).postgresConnections == 4)
        #expect(try Self.settings(["--pg-connections", "12"]).postgresConnections == 12)
        #expect(try Self.settings([], environment: ["NAVD_PG_CONNECTIONS": "2"]).postgresConnections == 2)
        #expect(throws: (any Error).self) { try Self.settings(["--pg-connections", "0"]) }
    }

    @Test func threadsDefaultToTheUsableCores() throws {
        #expect(try Self.settings([]).threads == min(256, CPUQuota.usableCores))
        #expect(CPUQuota.usableCores >= 1)
    }

    /// On PostgreSQL request threads wait for group commits and hold no connection: at least 8 per
    /// pooled connection by default; `--threads` still wins, and the pool stays its own setting.
    @Test func threadsOnPostgresDefaultToEightPerConnection() throws {
        let url = "postgres://navd@127.0.0.1:5432/navd"
        #expect(try Self.settings(["--store", url]).threads == max(CPUQuota.usableCores, 32))
        #expect(try Self.settings(["--store", url, "--pg-connections", "2"]).threads == max(CPUQuota.usableCores, 16))
        #expect(try Self.settings(["--store", url, "--pg-connections", "100"]).threads == 256)
        #expect(try Self.settings(["--store", url, "--threads", "3"]).threads == 3)
        #expect(try Self.settings(["--store", url, "--threads", "3"]).postgresConnections == 4)
        #expect(try Self.settings(["--store", "memory"]).threads == min(256, CPUQuota.usableCores))
    }

    /// `NAVD_PG_NOTIFY=off` (hidden, for bench/postgres.sh) turns the group's NOTIFY off; anything
    /// but on or off is refused.
    @Test func notifyIsOnUnlessTheBenchmarkTurnsItOff() throws {
        #expect(try Self.settings([]).postgresNotifies)
        #expect(try !Self.settings([], environment: ["NAVD_PG_NOTIFY": "off"]).postgresNotifies)
        #expect(throws: (any Error).self) { try Self.settings([], environment: ["NAVD_PG_NOTIFY": "no"]) }
    }

    @Test(
        arguments: [("200000 100000\n", 2), ("150000 100000", 2), ("50000 100000", 1), ("max 100000\n", nil), ("", nil), ("x y", nil)]
            as [(String, Int?)])
    func cgroupV2QuotasRoundUpToCores(_ text: String, _ cores: Int?) {
        #expect(CPUQuota.v2Cores(text) == cores)
    }

    @Test func theCgroupOfTheProcessAndTheGroupsAboveItBoundTheCores() {
        let files = [
            "/sys/fs/cgroup/kubepods/pod1/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/kubepods/cpu.max": "300000 100000\n",
            "/sys/fs/cgroup/cpu.max": "max 100000\n"
        ]
        #expect(CPUQuota.quotaCores(cgroup: "0::/kubepods/pod1\n", read: { files[$0] }) == 3)
        // In a container's namespace the group is `/`, whose cpu.max is the container's.
        #expect(CPUQuota.quotaCores(cgroup: "0::/\n", read: { $0 == "/sys/fs/cgroup/cpu.max" ? "250000 100000" : nil }) == 3)
        #expect(CPUQuota.quotaCores(cgroup: "0::/\n", read: { _ in nil }) == nil)
        // cgroup v1: the cpu controller's quota and period; -1 is no quota.
        let v1 = [
            "/sys/fs/cgroup/cpu,cpuacct/docker/a/cpu.cfs_quota_us": "100000\n",
            "/sys/fs/cgroup/cpu,cpuacct/docker/a/cpu.cfs_period_us": "100000\n"
        ]
        #expect(CPUQuota.quotaCores(cgroup: "4:cpu,cpuacct:/docker/a\n3:memory:/docker/a\n", read: { v1[$0] }) == 1)
        #expect(CPUQuota.quotaCores(cgroup: "1:cpu:/\n", read: { $0.hasSuffix("quota_us") ? "-1" : "100000" }) == nil)
    }

    @Test func theAffinityMaskCountsItsCPUs() {
        #expect(CPUQuota.allowedCPUs(status: "Name:\tnavd\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3\n") == 4)
        #expect(CPUQuota.allowedCPUs(status: "Cpus_allowed:\t00000000,00000003\n") == 2)
        #expect(CPUQuota.allowedCPUs(status: "Name:\tnavd\n") == nil)
    }
}
