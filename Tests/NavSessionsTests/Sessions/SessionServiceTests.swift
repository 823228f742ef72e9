import Foundation
import NavCore
import NavJSON
import NavWire
import Synchronization
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The session service's use cases, without HTTP: the limit on sessions holds under concurrent
/// creates with no lock held over the store, and a change is one call that authorises first.
@Suite struct SessionServiceTests {
    /// A session past its TTL has ended for every route before the sweep removes it: `exists`
    /// (which a replayed create asks) says so too.
    @Test func anExpiredSessionNotSweptYetNoLongerExists() throws {
        let clock = Atomic<Int64>(1_000_000)
        let store = MemoryStore()
        let sessions = try TestFixtures.service(sessionTTL: 10_000, store: store, now: { clock.load(ordering: .relaxed) })
        let id = try sessions.create(graph: nil, start: nil, context: [:]).session.id
        #expect(try sessions.exists(id))
        clock.add(10_001, ordering: .relaxed)
        #expect(try store.load(id) != nil, "not swept yet")
        #expect(try !sessions.exists(id))
        #expect(try !sessions.exists(SessionService.newID()))
    }

    @Test func concurrentCreatesNeverOvershootTheLimit() throws {
        for _ in 0..<20 {
            let sessions = try TestFixtures.service(maxSessions: 5)
            let created = Atomic<Int>(0)
            let refused = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 32) { _ in
                do throws(ServiceError) {
                    _ = try sessions.create(graph: nil, start: nil, context: [:])
                    created.add(1, ordering: .relaxed)
                } catch let error where error.code == .tooManySessions {
                    refused.add(1, ordering: .relaxed)
                } catch {
                    Issue.record("create failed: \(error)")
                }
            }
            let count = try sessions.store.count()
            #expect(count == created.load(ordering: .relaxed))
            #expect(count <= 5, "\(count) sessions under a limit of 5")
            #expect(count >= 1)
            #expect(created.load(ordering: .relaxed) + refused.load(ordering: .relaxed) == 32)
        }
        // Without a race the limit is reached exactly.
        let sessions = try TestFixtures.service(maxSessions: 5)
        for _ in 0..<5 { _ = try sessions.create(graph: nil, start: nil, context: [:]) }
        #expect(throws: ServiceError.self) { try sessions.create(graph: nil, start: nil, context: [:]) }
        #expect(try sessions.store.count() == 5)
    }

    @Test func aChangeIsAuthorisedBeforeAnythingElse() throws {
        let sessions = try TestFixtures.service(maxSessions: 10)
        let created = try sessions.create(graph: nil, start: nil, context: [:])
        let owner = Credentials(bearer: Token.digest(created.token))
        let stranger = Credentials(bearer: Token.digest(Token.generate()))
        var answered = 0
        // A stranger learns nothing, and neither `once` nor `answer` runs for them.
        #expect {
            try sessions.apply(
                .intent(.navigate("/top/list_news(category=1)")), to: created.session.id, credentials: stranger, ifMatch: nil,
                once: { change in
                    answered += 1
                    return try change()
                }, answer: { $0.session.state.version })
        } throws: { ($0 as? ServiceError)?.code == .invalidToken }
        #expect(answered == 0)
        let version = try sessions.apply(
            .intent(.navigate("/top/list_news(category=1)")), to: created.session.id, credentials: owner, ifMatch: IfMatch("\"1\""),
            once: { change in
                answered += 1
                return try change()
            }, answer: { $0.session.state.version }
        )
        #expect(version == 2)
        #expect(answered == 1)
        // A stale If-Match is refused with the version the session is at.
        #expect {
            try sessions.apply(
                .intent(.back(1)), to: created.session.id, credentials: owner, ifMatch: IfMatch("\"1\""),
                answer: { $0.session.state.version })
        } throws: { ($0 as? ServiceError)?.currentVersion == 2 }
    }
}
