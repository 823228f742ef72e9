extension MemoryStore {
    package func metaValue(_ key: String) throws(StoreError) -> String? {
        meta.withLock { $0[key] }
    }

    package func replaceMetaValue(_ key: String, with value: String?, ifCurrent current: String?) throws(StoreError) -> Bool {
        meta.withLock { values in
            guard values[key] == current else { return false }
            values[key] = value
            return true
        }
    }
}
