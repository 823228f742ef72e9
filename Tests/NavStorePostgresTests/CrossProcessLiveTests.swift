import Foundation
import Testing

@testable import NavTestSupport

/// Two navd processes on one PostgreSQL: a watcher connected to one follows changes applied
/// through the other (LISTEN/NOTIFY), every event once and in order, within 100 ms.
@Suite(.serialized) struct CrossProcessLiveTests {
    @Test(.needsPostgres) func aWatcherOnOneProcessFollowsChangesMadeThroughAnother() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let writer = try DaemonHarness(store: cluster.url)
        let reader = try DaemonHarness(store: cluster.url)
        let session = try writer.createSession()
        let stream = try EventStreamClient(
            port: reader.port, target: session.url + "/events", headers: ["Authorization": "Bearer \(session.token)"])
        #expect(try stream.nextMessage()?.event == "view")

        var latencies: [Double] = []
        var seqs: [Int] = []
        for round in 0..<20 {
            let started = Date()
            let answer = try writer.navigate(session, round % 2 == 0 ? "list_news(category=\(round))" : "..")
            let applied = try answer.json()
            let answered = Date()
            let messages = try stream.untilView()
            latencies.append(Date().timeIntervalSince(answered))
            seqs += messages.filter { $0.event == "lifecycle" }.compactMap { $0.id.flatMap(Int.init) }
            #expect(messages.last?.event == "view")
            #expect(messages.last?.json?["version"] == applied["version"], "round \(round)")
            #expect(Date().timeIntervalSince(started) < 5)
        }
        // Every event once, in order, none skipped.
        #expect(seqs == Array(6...(seqs.last ?? 0)))
        #expect(seqs.count > 20 * 5)
        // Delivered within 100 ms of the writer's answer (the median; a noisy machine may stall one).
        let median = latencies.sorted()[latencies.count / 2]
        #expect(median < 0.1, "delivery latencies: \(latencies.map { Int($0 * 1000) }) ms")

        // Deleted through the writer: the reader's watcher is told, and its stream ends.
        #expect(try writer.request("DELETE", session.url, headers: ["Authorization": "Bearer \(session.token)"]).status == 204)
        let end = try #require(try stream.nextMessage())
        #expect(end.event == "end")
        #expect(end.json == ["reason": "deleted"])
        #expect(try writer.stop() == 0)
        #expect(try reader.stop() == 0)
    }
}
