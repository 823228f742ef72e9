import NavJSON
import NavSessions
import NavStorePostgres
import NavStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

// Fills a store's feed with RECORDS synthetic records of the news graph and times traffic and a
// three-step funnel over all of them, and one session's history page among them (bench/traffic.sh,
// BENCHMARKS.md "Traffic and funnels").
//
//     navd-traffic-bench memory|sqlite:PATH|postgres://… [RECORDS] [RUNS]
//
// The fill goes straight to the store's tables (SQLite: rows as its `insertFeed` writes them in
// one transaction; PostgreSQL: batches of 10,000 rows), not through the session service: what
// is timed is the reads. A thousand sessions at a time walk the graph, ten records each; one record in
// ten is a params change (no view), one in ten a session's end.

let arguments = Array(CommandLine.arguments.dropFirst())
guard let spec = arguments.first else {
    print("usage: navd-traffic-bench memory|sqlite:PATH|postgres://… [RECORDS] [RUNS]")
    exit(2)
}
let count = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let runs = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5

/// Seconds on the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func whole(_ value: Double) -> String { String(Int(value.rounded())) }
func tenths(_ value: Double) -> String { String(Double(Int((value * 10).rounded())) / 10) }
/// `value` as 16 hex digits.
func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
/// Milliseconds, to a tenth below ten.
func ms(_ value: Double) -> String { value < 10 ? tenths(value) : whole(value) }

/// A fixed-seed generator (SplitMix64), so every run fills the same records.
struct Random {
    var state: UInt64 = 0x6E61_7664
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// Where a screen may go next in the synthetic walk.
let moves: [String: [String]] = [
    "top": ["list_news", "list_news", "home", "list_coupon", "help"],
    "list_news": ["show_news", "show_news", "top", "pick_category"],
    "show_news": ["list_news", "top"],
    "pick_category": ["list_news"],
    "list_coupon": ["show_coupon", "top"],
    "show_coupon": ["list_coupon"],
    "home": ["friend", "profile"],
    "friend": ["show_friend", "profile"],
    "show_friend": ["friend"],
    "profile": ["edit_profile", "friend"],
    "edit_profile": ["profile"],
    "help": ["top"]
]

let start: Int64 = 1_780_000_000_000
let span: Int64 = 6 * 86_400_000

/// The records, in the order they were written: sessions interleaved, each one's in version order.
func makeRecords(_ count: Int) -> [FeedRecord] {
    var random = Random()
    // A thousand sessions at a time, each in a burst of ten records (about 9 minutes apart with
    // a million records over six days), then the next thousand.
    let concurrent = 1000
    let sessions = count / 10 + concurrent
    var scene = [String](repeating: "", count: sessions)
    var version = [Int](repeating: 0, count: sessions)
    var records: [FeedRecord] = []
    records.reserveCapacity(count)
    for index in 0..<count {
        let s = index / (concurrent * 10) * concurrent + index % concurrent
        // 32 hex digits, as navd's session ids are (a store reads no other's history).
        let id = hex16(UInt64(s) &* 0x9E37_79B9_7F4A_7C15 | 1) + hex16(UInt64(s) &* 0xBF58_476D_1CE4_E5B9)
        let time = start + Int64(index) * span / Int64(count)
        version[s] += 1
        let from = scene[s]
        var to: String?
        var isEnd = false
        if from.isEmpty {
            to = "top"
        } else if version[s] % 10 == 0 {
            isEnd = true
        } else if random.next(10) == 0 {
            to = nil  // a params change
        } else {
            let options = moves[from] ?? ["top"]
            to = options[random.next(options.count)]
        }
        if let to { scene[s] = to }
        if isEnd { scene[s] = "" }
        let full = Array(
            "\"time\":\"\(Timestamp.text(milliseconds: time))\",\"schema\":1,\"session\":\"\(id)\",\"graph\":{\"name\":\"news\",\"version\":1},\"version\":\(version[s]),\"kind\":\"navigate\",\"intent\":{\"navigate\":\"\(to ?? from)\"},\"from\":{\"path\":\"/top\",\"screen\":{\"id\":\"e\(version[s])\",\"scene\":\"\(from)\",\"params\":{}}},\"to\":{\"path\":\"/top/\(to ?? from)\",\"screen\":{\"id\":\"e\(version[s] + 1)\",\"scene\":\"\(to ?? from)\",\"params\":{}}},\"added\":[],\"removed\":[],\"events\":[\"transitionStart\",\"willAppear\",\"didAppear\",\"transitionEnd\"],\"attributes\":{}}"
                .utf8)
        records.append(
            FeedRecord(
                session: id, version: version[s], isEnd: isEnd, graph: "news", time: time, attributes: [:], full: full,
                analytics: full, fromScene: from.isEmpty ? nil : from, toScene: isEnd ? nil : to))
        if isEnd { version[s] = 0 }
    }
    return records
}

/// The median of `runs` timings of `body`, in ms, after one warm-up.
func time(_ name: String, _ body: () throws -> String) rethrows {
    var answer = try body()
    var samples: [Double] = []
    for _ in 0..<runs {
        let began = now()
        answer = try body()
        samples.append((now() - began) * 1000)
    }
    samples.sort()
    print(
        "\(name): median \(ms(samples[samples.count / 2])) ms (min \(ms(samples[0])), max \(ms(samples[samples.count - 1]))) — \(answer)"
    )
}

/// The bench reads no session.
let noSessions: SnapshotDecoder = { _, _, _ throws(StoreError) in throw StoreError(message: "no sessions in this bench") }

let began = now()
let records = makeRecords(count)
print("\(count) records made in \(tenths(now() - began)) s; \(records.filter { $0.toScene != nil }.count) views")

let range = start..<start + span + 1
let funnel = FunnelQuery(graph: "news", steps: ["top", "list_news", "show_news"], within: 30 * 60_000, range: range)
func summary(_ traffic: FeedTraffic) -> String {
    "\(traffic.scenes.values.reduce(0, +)) views, \(traffic.edges.count) edges"
}

/// A session in the middle of the fill, whose history page is timed: its records are among
/// every other session's.
let sampleSession = records[records.count / 2].session

do {
    if spec == "memory" {
        // The memory store's feed as MemoryStore keeps it (behind its lock), filled in place.
        var feed = MemoryFeed()
        for record in records { feed.append(record) }
        // As MemoryStore reads it: a chunk at a time (there, each under its lock).
        let reading: MemoryFeed.ChunkReader = { feed.scan(after: $0, limit: MemoryStore.feedScanChunk, $1) }
        time("memory traffic") { summary(MemoryFeed.traffic(graph: "news", in: range, reading: reading)) }
        time("memory funnel") { "\(MemoryFeed.funnel(funnel, reading: reading))" }
    } else if spec.hasPrefix("sqlite:") {
        let path = String(spec.dropFirst("sqlite:".count))
        let fill = now()
        let created = try SQLiteStore(path: path, decode: noSessions)
        created.close()
        let connection = try SQLiteConnection(path: path)
        try connection.execute("BEGIN")
        for (index, record) in records.enumerated() {
            try SQLiteStore.insertFeed(LoggedFeedRecord(position: Int64(index + 1), record: record), connection, replacing: false)
        }
        try connection.execute("COMMIT")
        try connection.execute("ANALYZE")
        connection.close()
        print("sqlite filled in \(tenths(now() - fill)) s")
        let store = try SQLiteStore(path: path, decode: noSessions)
        try time("sqlite traffic") { summary(try store.traffic(graph: "news", in: range)) }
        try time("sqlite funnel") { "\(try store.funnel(funnel))" }
        try time("sqlite history") { "\(try store.history(of: sampleSession, after: 0, limit: 100).count) records" }
        store.close()
    } else {
        let fill = now()
        let store = try PostgresStore(url: spec, connections: 2, decode: noSessions)
        let connection = try PostgresConnection(conninfo: spec)
        var index = 0
        while index < records.count {
            let batch = records[index..<min(records.count, index + 10_000)]
            let columns = batch.map(PostgresStore.recordParameters)
            try connection.execute(
                """
                INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost, to_scene, from_scene)
                SELECT * FROM unnest($1::text[], $2::bigint[], $3::boolean[], $4::text[], $5::bigint[], $6::jsonb[], $7::text[],
                    $8::text[], $9::integer[], $10::text[], $11::text[])
                """,
                [PostgresStore.arrayLiteral(batch.map(\.session))]
                    + (0..<10).map { column in PostgresStore.arrayLiteral(columns.map { $0[column] ?? "" }) })
            index += batch.count
        }
        // Views' scenes went in as text; a record that is no view has none.
        try connection.execute("UPDATE feed SET to_scene = NULL, from_scene = NULL WHERE to_scene = ''")
        try connection.execute("UPDATE feed SET from_scene = NULL WHERE from_scene = ''")
        try connection.execute("VACUUM ANALYZE feed")
        connection.close()
        print("postgres filled in \(tenths(now() - fill)) s")
        try time("postgres traffic") { summary(try store.traffic(graph: "news", in: range)) }
        try time("postgres funnel") { "\(try store.funnel(funnel))" }
        try time("postgres history") { "\(try store.history(of: sampleSession, after: 0, limit: 100).count) records" }
        store.close()
    }
} catch {
    print("failed: \(error)")
    exit(1)
}
