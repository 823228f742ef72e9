import Foundation
import NavCore
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Sessions survive restarts and `kill -9` (SQLite, PostgreSQL), several processes share
/// sessions without losing an update (PostgreSQL), idle sessions expire.
@Suite(.serialized) struct DurabilityTests {
    // MARK: Restart

    @Test func sqliteSessionsSurviveARestart() throws {
        let folder = try TemporaryFolder()
        try checkRestart(store: "sqlite:\(folder.path)/navd.db")
    }

    @Test(.needsPostgres) func postgresSessionsSurviveARestart() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try checkRestart(store: cluster.url)
    }

    private func checkRestart(store: String) throws {
        var daemon = try DaemonHarness(store: store)
        var sessions: [DaemonHarness.Session] = []
        var views: [JSON] = []
        for index in 0..<5 {
            let session = try daemon.createSession(context: ["user": .string("u\(index)")])
            #expect(try daemon.navigate(session, "home#friend/show_friend(name=n\(index))").status == 200)
            #expect(try daemon.navigate(session, "^/top/home#profile").status == 200)
            sessions.append(session)
            views.append(try daemon.view(session))
        }
        let eventsBefore = try sessions.map { try daemon.events($0, limit: 1000).json() }
        #expect(try daemon.stop() == 0)

        daemon = try DaemonHarness(store: store)
        for (session, view) in zip(sessions, views) {
            #expect(try daemon.view(session) == view)
        }
        #expect(try sessions.map { try daemon.events($0, limit: 1000).json() } == eventsBefore)
        // Restored state keeps working: the saved tab stack comes back.
        let restored = try daemon.navigate(sessions[0], "^/top/home#friend").json()
        #expect(restored["path"]?.string == "/top/home#friend/show_friend(name=n0)")
        #expect(try daemon.stop() == 0)
    }

    // MARK: Crash

    /// Transitions stream in while navd is killed with SIGKILL at a random moment; after a
    /// restart every acknowledged change is there and no stage is half-applied.
    @Test func sqliteKeepsEveryAcknowledgedChangeThroughKillDashNine() throws {
        let folder = try TemporaryFolder()
        // A generation of the change log every 40 changes: the kills land before, during and
        // after the compactor's writes.
        let store = "sqlite:\(folder.path)/navd.db?compact=40"
        var generator = SystemRandomNumberGenerator()
        var sessions: [DaemonHarness.Session] = []
        var acknowledged: [String: (version: Int, path: String)] = [:]
        for round in 0..<4 {
            let daemon = try DaemonHarness(store: store)
            if sessions.isEmpty {
                for _ in 0..<4 { sessions.append(try daemon.createSession()) }
            }
            // Everything acknowledged before the previous crash is here, whole.
            try verify(daemon, sessions, acknowledged, round: round)

            let driver = TransitionDriver(daemon: daemon, sessions: sessions, paths: [NewsPaths.pathA, NewsPaths.pathB])
            driver.start()
            // Enough acknowledged to check (a loaded CI machine may take a while), then a kill at a
            // random moment.
            driver.wait(forAcknowledgements: 11, seconds: 30)
            usleep(UInt32.random(in: 0...600_000, using: &generator))
            daemon.crash()
            let acks = driver.finish()
            #expect(acks.count > 10, "round \(round): only \(acks.count) transitions were acknowledged before the crash")
            for ack in acks {
                if let known = acknowledged[ack.session], known.version > ack.version { continue }
                acknowledged[ack.session] = (ack.version, ack.path)
            }
        }
        let daemon = try DaemonHarness(store: store)
        try verify(daemon, sessions, acknowledged, round: 4)
        let versions = try sessions.map { try #require(try daemon.view($0)["version"]?.int) }
        #expect(try daemon.stop() == 0)

        // Every change that survived has its feed record, and no record survived without its
        // change: each session's history is its versions 1…its version, once each.
        let stopped = try SQLiteStore(
            path: "\(folder.path)/navd.db",
            decode: { _, _, _ throws(StoreError) -> (state: SessionState, graphVersion: Int) in
                throw StoreError(message: "no session is read here")
            })
        defer { stopped.close() }
        for (session, version) in zip(sessions, versions) {
            #expect(try stopped.history(of: session.id, after: 0, limit: 10_000).map(\.version) == Array(1...version))
        }
    }

    private func verify(
        _ daemon: DaemonHarness, _ sessions: [DaemonHarness.Session], _ acknowledged: [String: (version: Int, path: String)], round: Int
    ) throws {
        for session in sessions {
            let view = try daemon.view(session)
            let version = try #require(view["version"]?.int)
            let path = try #require(view["path"]?.string)
            if let ack = acknowledged[session.id] {
                // At most one change can have committed without its answer reaching the client.
                #expect(
                    version == ack.version || version == ack.version + 1, "round \(round): version \(version), acknowledged \(ack.version)")
                if version == ack.version { #expect(path == ack.path, "round \(round)") }
            }
            #expect([NewsPaths.canonicalA, NewsPaths.canonicalB].contains(path), "round \(round): half-applied stage \(path)")
            // The event log is whole: consecutive seqs, every transition closed.
            let log = try daemon.events(session, limit: 1000).json()
            let events = log["events"]?.array ?? []
            let seqs = events.compactMap { $0["seq"]?.int }
            #expect(seqs == Array((seqs.first ?? 1)..<((seqs.first ?? 1) + seqs.count)), "round \(round): gaps in \(seqs)")
            #expect(events.last?["type"]?.string == "transitionEnd")
            #expect(events.last?["transition"]?.int == version)
        }
    }

    // MARK: Several processes

    /// Three navd processes on one PostgreSQL; concurrent clients send conflicting intents
    /// for the same sessions through different processes.
    @Test(.needsPostgres) func threeProcessesOnPostgresLoseNoUpdate() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<3).map { _ in try DaemonHarness(store: cluster.url) }
        let sessions = try (0..<4).map { _ in try daemons[0].createSession() }
        let acks = Self.driveConflictingClients(daemons, sessions, clients: 6, steps: 40)
        #expect(acks.count > 50)
        try Self.checkNoLostUpdate(daemons, sessions, acks)
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    /// Three processes on one PostgreSQL take changes to the same sessions (each session's
    /// changes go round the processes) while one of them is killed with SIGKILL, the other two
    /// go on, and it is started again. Then the whole feed, paged with `next`, holds for every
    /// session versions 1…N once each, in version order, with N its stored version and at least
    /// its last acknowledged one: every acknowledged change has its record, and no record is
    /// there without its change (docs/design.md, "Written with the change").
    @Test(.needsPostgres) func threeProcessesOnPostgresKeepEveryAcknowledgedChangeInTheFeedThroughKillDashNine() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let admin = "kill-feed-admin-token-0123456789"
        let arguments = ["--admin-token", admin, "--threads", "8", "--pg-connections", "2"]
        let daemons = Locked(try (0..<3).map { _ in try DaemonHarness(store: cluster.url, arguments: arguments) })
        let initial = daemons.withLock { $0 }
        let sessions = try (0..<12).map { index in try initial[index % 3].createSession() }
        let acknowledged = Locked<[String: Int]>([:])
        let stop = Locked(false)
        let group = DispatchGroup()
        // Six clients, each owning two sessions (so each session's acknowledged versions are
        // known in order), each change sent to the next process round.
        for client in 0..<6 {
            group.enter()
            Thread {
                var step = client
                while !stop.withLock({ $0 }) {
                    let session = sessions[client * 2 + step % 2]
                    let daemon = daemons.withLock { $0[step % 3] }
                    let path = (step / 2) % 2 == 0 ? NewsPaths.pathA : NewsPaths.pathB
                    step += 1
                    guard
                        let answer = try? daemon.send(
                            "POST", session.url + "/navigate", json: ["path": .string(path)], token: session.token),
                        answer.status == 200, let version = try? answer.json()["version"]?.int
                    else { continue }
                    acknowledged.withLock { $0[session.id] = max($0[session.id] ?? 0, version) }
                }
                group.leave()
            }.start()
        }
        func total() -> Int { acknowledged.withLock { $0.values.reduce(0, +) } }
        func waitFor(moreThan count: Int, seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while total() <= count, Date() < deadline { usleep(20_000) }
        }
        waitFor(moreThan: 400, seconds: 15)
        usleep(UInt32.random(in: 0...300_000))
        initial[1].crash()
        let atKill = total()
        waitFor(moreThan: atKill + 400, seconds: 15)
        let atRestart = total()
        let restarted = try DaemonHarness(store: cluster.url, arguments: arguments)
        daemons.withLock { $0[1] = restarted }
        waitFor(moreThan: atRestart + 300, seconds: 15)
        stop.withLock { $0 = true }
        group.wait()
        #expect(atKill > 400 && atRestart > atKill + 400 && total() > atRestart + 300, "\(atKill) \(atRestart) \(total())")

        // The whole feed, paged with `next` through one process.
        let reader = daemons.withLock { $0[2] }
        var records: [JSON] = []
        var query = "limit=1000"
        while true {
            let page = try reader.request("GET", "/v1/feed?" + query, headers: ["Authorization": "Bearer \(admin)"]).json()
            let got = try #require(page["records"]?.array)
            records += got
            guard !got.isEmpty, let next = page["next"]?.string else { break }
            query = "limit=1000&after=\(next)"
        }
        let ids = records.compactMap { $0["id"]?.string }
        #expect(Set(ids).count == ids.count, "a record twice")
        for session in sessions {
            let view = try reader.view(session)
            let stored = try #require(view["version"]?.int)
            let mine = records.filter { $0["session"]?.string == session.id }
            let versions = mine.compactMap { $0["version"]?.int }
            #expect(versions == Array(1...stored), "session \(session.id): stored version \(stored), records \(versions)")
            #expect(stored >= acknowledged.withLock { $0[session.id] ?? 1 }, "session \(session.id)")
            #expect(mine.last?["to"]?["path"]?.string == view["path"]?.string, "session \(session.id)")
        }
        for daemon in daemons.withLock({ $0 }) { #expect(try daemon.stop() == 0) }
    }

    /// The same through group commit (docs/design.md, "PostgreSQL"): each process has many more request threads than
    /// connections, so changes to the same and to other sessions wait together and are committed
    /// in groups, while other processes change the same sessions — a lost race inside a group
    /// must cost only its own change (re-applied), and every change must still be acknowledged
    /// once, gapless, with its events once each.
    @Test(.needsPostgres) func groupCommitsAcrossThreadsAndProcessesLoseNoUpdate() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<3).map { _ in try DaemonHarness(store: cluster.url, arguments: ["--threads", "16", "--pg-connections", "2"])
        }
        let sessions = try (0..<6).map { _ in try daemons[0].createSession() }
        let acks = Self.driveConflictingClients(daemons, sessions, clients: 24, steps: 25)
        #expect(acks.count > 200)
        try Self.checkNoLostUpdate(daemons, sessions, acks)
        // Changes were committed in groups: fewer transactions than changes somewhere.
        var grouped = false
        for daemon in daemons {
            let metrics = String(decoding: try daemon.request("GET", "/metrics").body, as: UTF8.self)
            let value = { (name: String) in
                metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            }
            if value("navd_store_group_changes_total") > value("navd_store_group_commits_total") { grouped = true }
        }
        #expect(grouped, "no process committed two changes in one transaction")
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    static let conflictingIntents: [(name: String, body: JSON, path: String)] = [
        ("list", ["path": "^/top/list_news(category=1)"], "/navigate"),
        ("list2", ["path": "^/top/list_news(category=2)"], "/navigate"),
        ("show", ["path": "show_news(id=7)"], "/navigate"),
        ("top", ["name": "top"], "/transitions"),
        ("back", [:], "/back")
    ]

    /// `clients` threads each send `steps` random intents to random sessions through random
    /// daemons; returns every acknowledged change.
    static func driveConflictingClients(_ daemons: [DaemonHarness], _ sessions: [DaemonHarness.Session], clients: Int, steps: Int) -> [Ack]
    {
        let results = Locked<[Ack]>([])
        let group = DispatchGroup()
        for client in 0..<clients {
            group.enter()
            Thread {
                var generator = SplitMix64(seed: UInt64(client) &* 7919 &+ 17)
                for _ in 0..<steps {
                    let session = sessions[Int(generator.next() % UInt64(sessions.count))]
                    let daemon = daemons[Int(generator.next() % UInt64(daemons.count))]
                    let intent = conflictingIntents[Int(generator.next() % UInt64(conflictingIntents.count))]
                    guard let answer = try? daemon.send("POST", session.url + intent.path, json: intent.body, token: session.token),
                        answer.status == 200, let body = try? answer.json()
                    else { continue }
                    let events = body["events"]?.array ?? []
                    guard !events.isEmpty, let version = body["version"]?.int, let path = body["path"]?.string else { continue }
                    results.withLock {
                        $0.append(Ack(session: session.id, version: version, path: path, intent: intent.name, events: events))
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        return results.withLock { $0 }
    }

    /// Every applied change acknowledged exactly once with versions 2…final and no gap, every
    /// acknowledged event in the log once, and the final stage the replay of the acknowledged intents.
    static func checkNoLostUpdate(_ daemons: [DaemonHarness], _ sessions: [DaemonHarness.Session], _ acks: [Ack]) throws {
        let graph = try Graph.decode(
            json: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json")))
        ).graph
        let navigator = Navigator(graph: graph)
        for session in sessions {
            let view = try daemons[daemons.count - 1].view(session)
            let finalVersion = try #require(view["version"]?.int)
            let mine = acks.filter { $0.session == session.id }.sorted { $0.version < $1.version }
            // Every applied change was acknowledged exactly once, with versions 2…final and no gap.
            #expect(mine.map(\.version) == Array(2..<(finalVersion + 1)), "session \(session.id)")
            // Every acknowledged event is in the log exactly once, and the log has no gap.
            let log = try daemons[1 % daemons.count].events(session, limit: 1000).json()["events"]?.array ?? []
            #expect(log.compactMap { $0["seq"]?.int } == Array(1..<(log.count + 1)))
            #expect(Set(log.compactMap { $0["transition"]?.int }) == Set(1...finalVersion))
            let acknowledgedEvents = mine.flatMap(\.events)
            #expect(acknowledgedEvents.count == log.count - 5, "creation emits 5 events")
            #expect(Array(log.dropFirst(5)) == acknowledgedEvents)
            // The final stage is the replay of the acknowledged intents in version order.
            var state = try navigator.start().state
            for ack in mine {
                let intent: Intent =
                    switch ack.intent {
                    case "list": .navigate(Self.pathFor("list"))
                    case "list2": .navigate(Self.pathFor("list2"))
                    case "show": .navigate("show_news(id=7)")
                    case "top": .link(name: "top", params: [:])
                    default: .back(1)
                    }
                state = try navigator.apply(intent, to: state).state
                #expect(state.path.description == ack.path, "replaying version \(ack.version)")
            }
            #expect(state.path.description == view["path"]?.string)
            #expect(state.version == finalVersion)
        }
    }

    private static func pathFor(_ name: String) -> String {
        name == "list" ? "^/top/list_news(category=1)" : "^/top/list_news(category=2)"
    }

    // MARK: Incompatible snapshot

    /// A stored session whose graph version lost a scene gets a clear error; others still work.
    @Test func aSessionThatNoLongerFitsItsGraphFailsAloneWithAClearError() throws {
        let folder = try TemporaryFolder()
        let database = "\(folder.path)/navd.db"
        var daemon = try DaemonHarness(store: "sqlite:\(database)")
        let broken = try daemon.createSession()
        #expect(try daemon.navigate(broken, "onboarding").status == 200)
        let healthy = try daemon.createSession()
        #expect(try daemon.stop() == 0)

        // An operator edits the stored graph and removes the scene the session is on.
        try Shell.python(
            """
            import json, sqlite3
            db = sqlite3.connect('\(database)')
            (doc,) = db.execute("SELECT document FROM graphs WHERE name='news' AND version=1").fetchone()
            graph = json.loads(doc); del graph['scenes']['onboarding']
            db.execute("UPDATE graphs SET document=? WHERE name='news' AND version=1", (json.dumps(graph),))
            db.commit()
            """)
        daemon = try DaemonHarness(graphs: [], store: "sqlite:\(database)")
        let answer = try daemon.get(broken)
        #expect(answer.status == 422)
        #expect(answer.code == "unknown_graph")
        #expect((try answer.json())["detail"]?.string?.contains("onboarding") == true)
        #expect(try daemon.navigate(healthy, "list_news").status == 200)
        #expect(try daemon.request("GET", "/healthz").status == 200)
        #expect(try daemon.stop() == 0)
    }

    // MARK: Expiry

    @Test func idleSessionsExpireAndAreSweptFromTheStore() throws {
        let daemon = try DaemonHarness(store: "memory", arguments: ["--session-ttl", "2s", "--admin-token", "admin-token-0123456789"])
        let idle = try daemon.createSession()
        #expect(try daemon.get(idle).status == 200)
        usleep(3_200_000)
        // Expired is gone: its token gets the 401 any wrong token gets, the admin token a 404.
        let answer = try daemon.get(idle)
        #expect(answer.status == 401)
        #expect(answer.code == "unauthorized")
        let admin = try daemon.send("GET", idle.url, token: "admin-token-0123456789")
        #expect(admin.status == 404)
        #expect(admin.code == "session_not_found")
        let listing = try daemon.send("GET", "/v1/sessions", token: "admin-token-0123456789").json()
        #expect(listing["sessions"]?.array?.isEmpty == true, "the sweep deletes expired sessions from the store")
        #expect(try daemon.stop() == 0)
    }

    /// A replay never hands out a session that is gone: a create retried after its session
    /// expired creates a new one, as after a delete.
    @Test func aCreateRetriedAfterItsSessionExpiredCreatesAnew() throws {
        let daemon = try DaemonHarness(store: "memory", arguments: ["--session-ttl", "2s"])
        let key = ["Idempotency-Key": "expiry-\(UUID().uuidString)"]
        let first = try daemon.send("POST", "/v1/sessions", json: [:], headers: key)
        #expect(first.status == 201)
        let session = NavdSession(
            id: try #require(first.json()["id"]?.string), token: try #require(first.json()["token"]?.string), created: try first.json())
        #expect(try daemon.send("POST", "/v1/sessions", json: [:], headers: key).headers["idempotent-replayed"] == "true")
        usleep(3_200_000)
        #expect(try daemon.get(session).status == 401)
        let again = try daemon.send("POST", "/v1/sessions", json: [:], headers: key)
        #expect(again.status == 201)
        #expect(again.headers["idempotent-replayed"] == nil)
        let renewed = try #require(again.json()["id"]?.string)
        #expect(renewed != session.id)
        #expect(try daemon.send("GET", "/v1/sessions/\(renewed)", token: try #require(again.json()["token"]?.string)).status == 200)
        // From then on the new answer is the one replayed.
        #expect(try daemon.send("POST", "/v1/sessions", json: [:], headers: key).json()["id"]?.string == renewed)
        #expect(try daemon.stop() == 0)
    }
}
