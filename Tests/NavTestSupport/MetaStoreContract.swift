import NavSessions
import Testing

/// What every ``MetaStore`` must do, whatever keeps the values: a value reads back as written
/// (text that looks like a number included), and a compare-and-set succeeds only on the value
/// it names, absent included.
enum MetaStoreContract {
    static func check(_ store: any MetaStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let key = "webhook:contract"
        #expect(try store.metaValue(key) == nil, sourceLocation: sourceLocation)
        // Absent: only a set that expects it absent succeeds.
        #expect(try !store.replaceMetaValue(key, with: "1", ifCurrent: "0"), sourceLocation: sourceLocation)
        #expect(try store.replaceMetaValue(key, with: "1.10", ifCurrent: nil), sourceLocation: sourceLocation)
        #expect(try store.metaValue(key) == "1.10", sourceLocation: sourceLocation)
        #expect(try !store.replaceMetaValue(key, with: "2", ifCurrent: nil), sourceLocation: sourceLocation)
        #expect(try !store.replaceMetaValue(key, with: "2", ifCurrent: "1.1"), sourceLocation: sourceLocation)
        #expect(try store.replaceMetaValue(key, with: "007", ifCurrent: "1.10"), sourceLocation: sourceLocation)
        #expect(try store.metaValue(key) == "007", sourceLocation: sourceLocation)
        #expect(try store.replaceMetaValue(key, with: "owner-a 1764300000000", ifCurrent: "007"), sourceLocation: sourceLocation)
        #expect(try store.metaValue(key) == "owner-a 1764300000000", sourceLocation: sourceLocation)
        // Removal is a compare-and-set too.
        #expect(try !store.replaceMetaValue(key, with: nil, ifCurrent: "owner-b 1764300000000"), sourceLocation: sourceLocation)
        #expect(try store.replaceMetaValue(key, with: nil, ifCurrent: "owner-a 1764300000000"), sourceLocation: sourceLocation)
        #expect(try store.metaValue(key) == nil, sourceLocation: sourceLocation)
        #expect(try store.metaValue("webhook:other") == nil, sourceLocation: sourceLocation)
    }

    /// Two writers that read the same value each try to replace it, many times: exactly one wins each round.
    static func checkRace(_ first: any MetaStore, _ second: any MetaStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let key = "webhook-lease:race"
        var current: String? = nil
        for round in 0..<20 {
            let results = try [first, second].enumerated().map { index, store in
                try store.replaceMetaValue(key, with: "owner-\(index) \(round)", ifCurrent: current)
            }
            #expect(results.filter { $0 }.count == 1, "round \(round): \(results)", sourceLocation: sourceLocation)
            current = try first.metaValue(key)
            #expect(try second.metaValue(key) == current, sourceLocation: sourceLocation)
        }
    }
}
