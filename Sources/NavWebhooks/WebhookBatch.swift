import NavJSON
import NavSessions

/// Records sent in one request: fixed once attempted, so that a retry sends the same records
/// under the same `webhook-id` (the cursor of its last record) and a receiver that got it before
/// drops it by that id.
package struct WebhookBatch: Sendable {
    /// The records' ids, in order.
    package var ids: [String]
    /// The cursor of the first and last record sent.
    package var first: FeedCursor
    package var last: FeedCursor
    /// Where the endpoint's position goes once the batch is acknowledged: past the records read
    /// with it, those another graph's filter left out included.
    package var next: FeedCursor
    /// When the oldest record was written (ms since the epoch): the endpoint's lag.
    package var oldestTime: Int64
    /// The CloudEvents JSON batch.
    package var body: [UInt8]

    /// `webhook-id`.
    package var id: String { last.description }

    package static let contentType = "application/cloudevents-batch+json"
    package static let eventType = "dev.navd.navigation.changed"
    package static let dataSchema = "urn:navd:feed-record:1"

    /// The batch of `entries` (at least one, with their graph names), read up to `next`.
    package init?(_ entries: [(entry: FeedEntry, graph: String)], next: FeedCursor) {
        guard let firstEntry = entries.first, let lastEntry = entries.last else { return nil }
        ids = entries.map(\.entry.id)
        first = firstEntry.entry.cursor
        last = lastEntry.entry.cursor
        self.next = next
        oldestTime = entries.map(\.entry.time).min() ?? firstEntry.entry.time
        var writer = JSONWriter(reservingCapacity: entries.reduce(2) { $0 + $1.entry.members.count + 512 })
        writer.writeLiteral("[")
        for (index, item) in entries.enumerated() {
            if index > 0 { writer.writeLiteral(",") }
            Self.writeEvent(item.entry, graph: item.graph, into: &writer)
        }
        writer.writeLiteral("]")
        body = writer.finish()
    }

    /// One record as a CloudEvents 1.0 event in JSON, the record itself its `data`.
    static func writeEvent(_ entry: FeedEntry, graph: String, into writer: inout JSONWriter) {
        writer.writeLiteral("{\"specversion\":\"1.0\",\"id\":")
        writer.writeString(entry.id)
        writer.writeLiteral(",\"source\":")
        writer.writeString("navd/" + graph)
        writer.writeLiteral(",\"type\":")
        writer.writeString(eventType)
        writer.writeLiteral(",\"subject\":")
        writer.writeString(entry.session)
        writer.writeLiteral(",\"time\":")
        writer.writeString(Timestamp.text(milliseconds: entry.time))
        writer.writeLiteral(",\"datacontenttype\":\"application/json\",\"dataschema\":")
        writer.writeString(dataSchema)
        writer.writeLiteral(",\"data\":")
        entry.write(into: &writer)
        writer.writeLiteral("}")
    }

    /// The name of the graph a record's members name (`"graph": {"name": …}`); nil when they do not parse.
    package static func graphName(of entry: FeedEntry) -> String? {
        guard let record = try? JSONValue(parsing: [UInt8(ascii: "{")] + entry.members) else { return nil }
        return record["graph"]?["name"]?.stringValue
    }
}
