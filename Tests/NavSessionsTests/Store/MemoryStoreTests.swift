import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The memory store keys navd's hex session ids by their value; an id of any other form names
/// no session and is refused (SessionID), so a session is found by exactly its own id.
@Suite struct MemoryStoreTests {
    @Test func sessionsAreFoundByExactlyTheirOwnId() throws {
        let graphs = try TestFixtures.graphs()
        let store = MemoryStore()
        let hex = SessionService.newID()
        let ids = [hex, "0123456789abcdef0123456789abcdef"]
        for id in ids {
            let (session, events) = try TestFixtures.session(id, in: graphs)
            try store.insert(session, events: events)
        }
        // Ids of another form are refused, never kept as text.
        for id in ["not-hex", "0123456789abcdef0123456789abcdeg", "", "é", hex + "\0"] {
            #expect(throws: StoreError.self) { try store.insert(try TestFixtures.session(id, in: graphs).0, events: []) }
            #expect(try store.load(id) == nil)
        }
        #expect(try store.count() == ids.count)
        for id in ids {
            #expect(try store.load(id)?.id == id)
            #expect(try store.events(of: id, after: 0, limit: 100).isEmpty == false)
        }
        // Case, length and one digit matter.
        for other in [hex.uppercased(), String(hex.dropLast()), "0123456789abcdef0123456789abcdee", "0123456789ABCDEF0123456789ABCDEF"] {
            #expect(try store.load(other) == nil, "\(other)")
        }
        #expect(throws: StoreError.self) { try store.insert(try TestFixtures.session(hex, in: graphs).0, events: []) }
        #expect(try store.delete(hex))
        #expect(try store.load(hex) == nil)
        #expect(try !store.delete(hex))
    }

    /// A character next to the hex ranges (`/` `:` `@` `G` `` ` `` `g`, uppercase `A`–`F`) in
    /// either half of an id makes an id of another form, never one that reads as a hex id's digits.
    @Test func nearMissCharactersAreNotDigits() throws {
        let graphs = try TestFixtures.graphs()
        let store = MemoryStore()
        let hex = "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"
        try store.insert(try TestFixtures.session(hex, in: graphs).0, events: [])
        var others: [String] = []
        for position in [0, 1, 15, 16, 17, 31] {
            for replacement in ["/", ":", "@", "G", "`", "g", "A", "F", "\u{0}", "\u{80}"] {
                var characters = Array(hex)
                characters[position] = Character(replacement)
                others.append(String(characters))
            }
        }
        for other in others {
            #expect(!SessionID.isValid(other), "\(other)")
            #expect(try store.load(other) == nil, "\(other)")
            #expect(throws: StoreError.self) { try store.insert(try TestFixtures.session(other, in: graphs).0, events: []) }
        }
        #expect(try store.count() == 1)
        #expect(try store.load(hex)?.id == hex)
    }

    /// Hex ids are keyed by their value: ids one digit apart, at every position, are different
    /// sessions (a decoding that lost or mixed digits would make some of them one).
    @Test func hexIdsOneDigitApartAreDifferentSessions() throws {
        let graphs = try TestFixtures.graphs()
        let store = MemoryStore()
        let base = Array("0123456789abcdeffedcba9876543210")
        var ids: Set<String> = [String(base)]
        for position in base.indices {
            for digit in "0123456789abcdef" where digit != base[position] {
                var characters = base
                characters[position] = digit
                ids.insert(String(characters))
            }
        }
        for id in ids { try store.insert(try TestFixtures.session(id, in: graphs).0, events: []) }
        #expect(try store.count() == 1 + 32 * 15)
        for id in ids { #expect(try store.load(id)?.id == id, "\(id)") }
    }

    @Test func updatesAreComparedAndSet() throws {
        let graphs = try TestFixtures.graphs()
        let store = MemoryStore()
        let (session, events) = try TestFixtures.session(SessionService.newID(), in: graphs)
        try store.insert(session, events: events)
        var next = session
        next.state.version += 1
        #expect(try store.update(next, expectedVersion: session.state.version, events: [], eventsJSON: []))
        #expect(try !store.update(next, expectedVersion: session.state.version, events: [], eventsJSON: []))
        #expect(try store.load(session.id)?.state.version == session.state.version + 1)
    }
}
