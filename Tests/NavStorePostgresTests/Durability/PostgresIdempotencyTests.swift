import Foundation
import Logging
import Testing

@testable import NavCLI
@testable import NavCore
@testable import NavSessions
@testable import NavTestSupport

/// `Idempotency-Key`s kept by the PostgreSQL store (docs/design.md, "Idempotency"): a retry that a load
/// balancer sends to another process replays the first answer instead of applying twice; the
/// key with another request is refused there too; a deleted session's answers are forgotten.
@Suite(.serialized) struct PostgresIdempotencyTests {
    /// `send` to every daemon at once, each on a thread of its own: the answers by daemon index
    /// (a request that failed to complete has none).
    static func atOnce(_ daemons: [DaemonHarness], _ send: @escaping @Sendable (DaemonHarness) throws -> HTTPMessage) -> [Int: HTTPMessage]
    {
        let answers = Locked([Int: HTTPMessage]())
        let group = DispatchGroup()
        for (index, daemon) in daemons.enumerated() {
            group.enter()
            Thread {
                if let answer = try? send(daemon) { answers.withLock { $0[index] = answer } }
                group.leave()
            }.start()
        }
        group.wait()
        return answers.withLock { $0 }
    }

    @Test(.needsPostgres) func aRetryThroughAnotherProcessReplaysTheFirstAnswer() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let first = try DaemonHarness(store: cluster.url)
        let second = try DaemonHarness(store: cluster.url)
        let session = try first.createSession()
        let key = ["Idempotency-Key": "retry-\(UUID().uuidString)"]
        let body: JSON = ["path": "list_news/show_news(id=3)"]

        let answer = try first.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key)
        #expect(answer.status == 200)
        #expect(answer.headers["idempotent-replayed"] == nil)
        // The same request through the other process: the first answer, nothing applied again.
        let replay = try second.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key)
        #expect(replay.status == 200)
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.headers["etag"] == answer.headers["etag"])
        #expect(try replay.json() == (try answer.json()))
        #expect(try second.view(session)["version"]?.int == 2)
        // Again through the second (now from its own cache) and back through the first.
        #expect(
            try second.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key).headers[
                "idempotent-replayed"] == "true")
        #expect(
            try first.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key).headers["idempotent-replayed"]
                == "true")
        #expect(try first.view(session)["version"]?.int == 2)

        // The key with another body, through the process that never saw it: refused.
        let reused = try second.send("POST", session.url + "/navigate", json: ["path": "^/top"], token: session.token, headers: key)
        #expect(reused.status == 422)
        #expect(reused.code == "idempotency_key_reused")

        // A fresh key through the second process is kept too, and replays through the first.
        let other = ["Idempotency-Key": "retry-\(UUID().uuidString)"]
        let back = try second.send("POST", session.url + "/back", json: [:], token: session.token, headers: other)
        #expect(back.status == 200)
        let backAgain = try first.send("POST", session.url + "/back", json: [:], token: session.token, headers: other)
        #expect(backAgain.headers["idempotent-replayed"] == "true")
        #expect(try backAgain.json() == (try back.json()))
        #expect(try first.view(session)["version"]?.int == 3)

        // The store files a digest of each key, never the key.
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE key LIKE '%retry-%'") == "0")
        // Deleting the session forgets its answers in the store.
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE session_id = '\(session.id)'") == "2")
        #expect(try second.send("DELETE", session.url, token: session.token).status == 204)
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE session_id = '\(session.id)'") == "0")
        // The first process learns of the deletion by NOTIFY, a moment later: once it has, the
        // retry is refused like any request for the ended session, its kept answer forgotten.
        var seen = false
        for _ in 0..<100 where !seen {
            seen = try first.send("GET", session.url, token: session.token).status == 401
            if !seen { usleep(50_000) }
        }
        #expect(seen, "the first process never saw the session end")
        let afterDelete = try first.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key)
        #expect(afterDelete.status == 401)
        #expect(try first.stop() == 0)
        #expect(try second.stop() == 0)
    }

    /// The same key sent through two processes at once (a load balancer retrying before the first
    /// try answered): the change is applied once, and both get its answer.
    @Test(.needsPostgres) func theSameKeyThroughTwoProcessesAtOnceAppliesOnce() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<2).map { _ in try DaemonHarness(store: cluster.url, arguments: ["--threads", "8"]) }
        let session = try daemons[0].createSession()
        let paths = ["^/top/list_news(category=1)", "^/top"]
        for round in 0..<12 {
            let key = ["Idempotency-Key": "both-\(round)-\(UUID().uuidString)"]
            let body: JSON = ["path": .string(paths[round % 2])]
            let both = Self.atOnce(daemons) {
                try $0.send("POST", session.url + "/navigate", json: body, token: session.token, headers: key)
            }
            #expect(both.count == 2)
            #expect(both.values.allSatisfy { $0.status == 200 }, "round \(round): \(both.values.map(\.status))")
            let versions = Set(both.values.compactMap { try? $0.json()["version"]?.int })
            #expect(versions == [round + 2], "round \(round): applied more than once (\(versions))")
        }
        #expect(try daemons[1].view(session)["version"]?.int == 13)
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    /// A create retried through another process replays the session (its token included)
    /// instead of making a second one; the store holds the answer sealed, neither the token nor
    /// the key in the clear; the key with another body is refused there too; the kept answer
    /// goes with its session.
    @Test(.needsPostgres) func aCreateRetriedThroughAnotherProcessReplaysTheSession() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let first = try DaemonHarness(store: cluster.url)
        let second = try DaemonHarness(store: cluster.url)
        let retryKey = "create-\(UUID().uuidString)"
        let key = ["Idempotency-Key": retryKey]
        let body: JSON = ["context": ["user": "u1"]]

        let created = try first.send("POST", "/v1/sessions", json: body, headers: key)
        #expect(created.status == 201, "\(created)")
        let token = try #require(created.json()["token"]?.string)
        let id = try #require(created.json()["id"]?.string)
        // The key with another body through the process that never saw it: refused, nothing made.
        let wrong = try second.send("POST", "/v1/sessions", json: ["context": ["user": "u2"]], headers: key)
        #expect(wrong.status == 422 && wrong.code == "idempotency_key_reused", "\(wrong)")
        let replay = try second.send("POST", "/v1/sessions", json: body, headers: key)
        #expect(replay.status == 201)
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.headers["location"] == "/v1/sessions/\(id)")
        #expect(try replay.json() == (try created.json()))
        #expect(try cluster.query("SELECT count(*) FROM sessions") == "1")
        // The database holds a digest of the key and the sealed answer: no token, no key.
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE session_id = '\(id)'") == "1")
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE body LIKE '%\(token)%' OR key LIKE '%\(retryKey)%'") == "0")
        // The replayed token drives the session through either process.
        let session = NavdSession(id: id, token: token, created: try created.json())
        #expect(try second.navigate(session, "list_news").status == 200)
        // The key with another body, through either process: refused, and nothing created.
        for daemon in [first, second] {
            let reused = try daemon.send("POST", "/v1/sessions", json: ["context": ["user": "u2"]], headers: key)
            #expect(reused.status == 422 && reused.code == "idempotency_key_reused", "\(reused)")
        }
        #expect(try cluster.query("SELECT count(*) FROM sessions") == "1")
        // Deleting the session forgets its kept answer, and the process that replayed it (from its
        // memory since) does not hand out the ended session: the retry creates anew.
        #expect(try first.send("DELETE", session.url, token: token).status == 204)
        #expect(try cluster.query("SELECT count(*) FROM idempotency") == "0")
        let afterDelete = try second.send("POST", "/v1/sessions", json: body, headers: key)
        #expect(afterDelete.status == 201 && afterDelete.headers["idempotent-replayed"] == nil, "\(afterDelete)")
        #expect(try afterDelete.json()["id"]?.string != id)
        #expect(try cluster.query("SELECT count(*) FROM sessions") == "1")
        #expect(try first.stop() == 0)
        #expect(try second.stop() == 0)
    }

    /// The same create sent through two processes at once: one session, and both answers are it.
    @Test(.needsPostgres) func theSameCreateThroughTwoProcessesAtOnceMakesOneSession() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<2).map { _ in try DaemonHarness(store: cluster.url) }
        for round in 0..<10 {
            let key = ["Idempotency-Key": "both-create-\(round)-\(UUID().uuidString)"]
            let both = Self.atOnce(daemons) { try $0.send("POST", "/v1/sessions", json: ["context": ["round": .int(round)]], headers: key) }
            #expect(both.count == 2 && both.values.allSatisfy { $0.status == 201 }, "round \(round): \(both.values.map(\.status))")
            let ids = Set(both.values.compactMap { try? $0.json()["id"]?.string })
            let tokens = Set(both.values.compactMap { try? $0.json()["token"]?.string })
            #expect(ids.count == 1 && tokens.count == 1, "round \(round): \(ids)")
            #expect(try cluster.query("SELECT count(*) FROM sessions") == String(round + 1), "round \(round)")
        }
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    /// Migration 5 files the keys kept in the clear by earlier versions as navd files them now, so
    /// a retry across the upgrade still replays: a kept answer's key is put back in the clear
    /// and the database taken back to schema 4, so that migration 5 and those after it run again.
    @Test(.needsPostgres) func keysKeptInTheClearBeforeStillReplayAfterTheUpgrade() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let first = try DaemonHarness(store: cluster.url)
        let session = try first.createSession()
        let key = ["Idempotency-Key": "upgrade-\(UUID().uuidString)"]
        let answer = try first.navigate(session, "list_news", headers: key)
        #expect(answer.status == 200)
        #expect(try first.stop() == 0)
        _ = try cluster.query(
            "UPDATE idempotency SET key = session_id || ' ' || '\(key["Idempotency-Key"] ?? "")'; DELETE FROM migrations WHERE version >= 5; DROP TABLE store_meta, feed, feed_state, feed_checkpoints"
        )
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE key LIKE '%upgrade-%'") == "1")

        let second = try DaemonHarness(store: cluster.url)
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE key LIKE '%upgrade-%'") == "0")
        let retry = try second.navigate(session, "list_news", headers: key)
        #expect(retry.headers["idempotent-replayed"] == "true", "\(retry)")
        #expect(try retry.json() == (try answer.json()))
        #expect(try second.view(session)["version"]?.int == 2)
        #expect(try second.stop() == 0)
    }

    /// A create retried after its session expired, before any sweep removed it (the session's
    /// time is set back, with a TTL of an hour, so no sweep is due): not replayed, through either
    /// process; the expired session and its kept answer are swept and the create made anew.
    @Test(.needsPostgres) func aCreateRetriedAfterItsSessionExpiredBeforeTheSweepCreatesAnew() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<2).map { _ in try DaemonHarness(store: cluster.url, arguments: ["--session-ttl", "1h"]) }
        for (round, daemon) in daemons.enumerated() {
            let key = ["Idempotency-Key": "unswept-\(round)-\(UUID().uuidString)"]
            let created = try daemons[0].send("POST", "/v1/sessions", json: [:], headers: key)
            #expect(created.status == 201)
            let id = try #require(created.json()["id"]?.string)
            _ = try cluster.query("UPDATE sessions SET touched_at = 0 WHERE id = '\(id)'")
            let again = try daemon.send("POST", "/v1/sessions", json: [:], headers: key)
            #expect(again.status == 201 && again.headers["idempotent-replayed"] == nil, "round \(round): \(again)")
            let renewed = try #require(again.json()["id"]?.string)
            #expect(renewed != id)
            #expect(try cluster.query("SELECT count(*) FROM sessions WHERE id = '\(id)'") == "0")
            #expect(try daemons[1 - round].send("POST", "/v1/sessions", json: [:], headers: key).json()["id"]?.string == renewed)
        }
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    /// Past the TTL of a living session, every process agrees: its create's answer still replays
    /// (it is kept as long as the session lives), a change's answer replays nowhere (the sweep
    /// deleted it, and each process's memory forgets it too).
    @Test(.needsPostgres) func pastTheTTLEveryProcessAgreesOnWhatReplays() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<2).map { _ in try DaemonHarness(store: cluster.url, arguments: ["--session-ttl", "3s"]) }
        let createKey = ["Idempotency-Key": "alive-\(UUID().uuidString)"]
        let created = try daemons[0].send("POST", "/v1/sessions", json: [:], headers: createKey)
        #expect(created.status == 201)
        let session = NavdSession(
            id: try #require(created.json()["id"]?.string), token: try #require(created.json()["token"]?.string),
            created: try created.json())
        let changeKey = ["Idempotency-Key": "change-\(UUID().uuidString)"]
        #expect(try daemons[0].navigate(session, "list_news", headers: changeKey).status == 200)
        #expect(try daemons[0].navigate(session, "list_news", headers: changeKey).headers["idempotent-replayed"] == "true")
        // Keep the session alive past its TTL, sweeps included.
        for step in 0..<10 {
            usleep(500_000)
            #expect(try daemons[1].navigate(session, "^/top/list_news(category=\(step + 1))").status == 200)
        }
        #expect(try cluster.query("SELECT count(*) FROM idempotency WHERE key NOT LIKE 'create %'") == "0")
        for daemon in daemons {
            let replay = try daemon.send("POST", "/v1/sessions", json: [:], headers: createKey)
            #expect(replay.status == 201 && replay.headers["idempotent-replayed"] == "true", "\(replay)")
            #expect(try replay.json()["id"]?.string == session.id)
        }
        #expect(try cluster.query("SELECT count(*) FROM sessions") == "1")
        // The change's key is forgotten by both: the retry is a new request, applied again (the
        // process that answered it first still remembered it), and its answer is the one kept now.
        let again = try daemons[0].navigate(session, "list_news", headers: changeKey)
        #expect(again.status == 200 && again.headers["idempotent-replayed"] == nil, "\(again)")
        let replayed = try daemons[1].navigate(session, "list_news", headers: changeKey)
        #expect(replayed.headers["idempotent-replayed"] == "true")
        #expect(try replayed.json() == (try again.json()))
        for daemon in daemons { #expect(try daemon.stop() == 0) }
    }

    /// Answers expire with the session TTL: the sweep deletes them with expired sessions and
    /// any older than the TTL.
    @Test(.needsPostgres) func keptAnswersExpireWithTheSessionTTL() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemon = try DaemonHarness(store: cluster.url, arguments: ["--session-ttl", "2s"])
        let session = try daemon.createSession()
        let key = ["Idempotency-Key": "ttl-\(UUID().uuidString)"]
        #expect(
            try daemon.send("POST", session.url + "/navigate", json: ["path": "list_news"], token: session.token, headers: key).status
                == 200)
        #expect(try cluster.query("SELECT count(*) FROM idempotency") == "1")
        let deadline = Date().addingTimeInterval(20)
        while try cluster.query("SELECT count(*) FROM idempotency") != "0", Date() < deadline { usleep(200_000) }
        #expect(try cluster.query("SELECT count(*) FROM idempotency") == "0")
        #expect(try daemon.stop() == 0)
    }

    /// A keyed change that changed nothing writes no statement for its answer to ride on; its
    /// answer is kept all the same, so a retry through another process replays it instead of
    /// navigating back from where the session was moved since.
    @Test(.needsPostgres) func aKeyedNoOpRetriedThroughAnotherProcessReplays() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let first = try DaemonHarness(store: cluster.url)
        let second = try DaemonHarness(store: cluster.url)
        let session = try first.createSession()
        let key = ["Idempotency-Key": "no-op-\(UUID().uuidString)"]
        let answer = try first.navigate(session, "^/top", headers: key)
        #expect(answer.status == 200 && answer.headers["etag"] == "\"1\"", "\(answer)")
        #expect(try first.navigate(session, "list_news").status == 200)
        let retry = try second.navigate(session, "^/top", headers: key)
        #expect(retry.headers["idempotent-replayed"] == "true", "\(retry)")
        #expect(try retry.json() == (try answer.json()))
        #expect(try second.view(session)["version"]?.int == 2, "not navigated back")
        #expect(try first.stop() == 0)
        #expect(try second.stop() == 0)
    }

    /// A keyed flood of large answers leaves no more in PostgreSQL's table than the budget (the
    /// answers forgotten to make room are deleted there), and a restart counts what it holds.
    @Test(.needsPostgres) func postgresKeepsNoMoreAnswerBytesThanTheBudgetAndCountsThemAfterARestart() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let total = 128 << 10
        let session: (id: String, token: String)
        let version: Int
        do {
            let graphs = GraphRegistry()
            let store = try StoreFactory.open(cluster.url, graphs: graphs, connections: 2, logger: Logger(label: "test"))
            let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: total)
            let sessions = [try navd.session(), try navd.session()]
            for index in 0..<40 {
                navd.advance(seconds: 61)
                let answer = navd.navigate(
                    sessions[index % 2], "^/top/list_news(category=1)/show_news(id=\(index + 1))", key: "flood\(index)")
                try #require(answer.status == 200)
                #expect(navd.answers.bytes <= total)
            }
            #expect(try navd.evicted() > 20)
            session = sessions[1]
            version = try navd.version(session)
            store.close()
        }
        let kept = try cluster.query(
            "SELECT COUNT(*) || ' ' || COALESCE(SUM(octet_length(body) + octet_length(headers) + octet_length(key) + octet_length(fingerprint)), 0) FROM idempotency"
        ).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(kept.count == 2)
        #expect(kept[0] >= 2)
        #expect(kept[1] <= total, "\(kept[0]) answers of \(kept[1]) bytes kept")

        let graphs = GraphRegistry()
        let store = try StoreFactory.open(cluster.url, graphs: graphs, connections: 2, logger: Logger(label: "test"))
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: total, addGraph: false)
        try StoreFactory.restoreGraphs(from: store, into: graphs, logger: Logger(label: "test"))
        #expect(navd.answers.bytes >= kept[1] && navd.answers.bytes <= total)
        #expect(try navd.version(session) == version, "every acknowledged change is kept")
    }
}
