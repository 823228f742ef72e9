/// Small named values a store keeps beside its data, shared by every process on the store: what
/// a webhook endpoint has been delivered up to, and which process delivers to it (a lease).
/// SQLite and PostgreSQL keep them in their `store_meta` table, the memory store in memory.
/// Keys of navd's own bookkeeping there (`compacted_seq`, `default_graph`, …) are not for callers:
/// a caller's keys have a prefix of their own (`webhook:`).
package protocol MetaStore: Sendable {
    /// The value under `key`, or nil.
    func metaValue(_ key: String) throws(StoreError) -> String?

    /// Sets `key` to `value` (nil removes it) if it holds `current` now (nil: if it is absent),
    /// in one step with the comparison, so that two processes never both succeed.
    /// - Returns: whether it did.
    func replaceMetaValue(_ key: String, with value: String?, ifCurrent current: String?) throws(StoreError) -> Bool
}
