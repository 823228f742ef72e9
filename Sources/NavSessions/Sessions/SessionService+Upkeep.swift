import NavCore

/// Keeping the service's sessions current with the store: what other processes change in a
/// shared store, and the sweep of idle sessions and old feed records.
extension SessionService {
    /// Follows what other processes change in a shared store (PostgreSQL), so that this process's
    /// watchers see every change (docs/design.md, "Across processes"). Nothing for a store of one process.
    package func followStore() {
        guard let feed = store as? any ChangeFeed else { return }
        startFeedPolling()
        feed.follow { [live] notice in
            // Another process's change may have written a record: the feed's watchers look too.
            live.refresh(Self.feedWatchKey)
            guard let notice else {
                live.refreshAll()
                return
            }
            switch notice.kind {
            case .changed: live.refresh(notice.id)
            case .deleted: live.end(notice.id, .deleted)
            case .expired: live.end(notice.id, .expired)
            }
        }
    }

    /// Deletes idle sessions, ending their watchers. - Returns: how many.
    package func sweep() throws(ServiceError) -> Int {
        let time = currentTime()
        let cutoff = time - configuration.sessionTTL
        // Each expired session's end record, made by the store as it deletes the session.
        var ending: (@Sendable (StoredSession) -> FeedRecord)? = nil
        if let settings = configuration.feed {
            let counts = feedCounts
            ending = { session in
                var ended = session
                ended.touchedAt = time
                let record = Self.endRecord(of: ended, reason: .expired, settings: settings)
                counts.count(record, kind: .end)
                return record
            }
        }
        let ended: [ExpiredSession]
        do {
            ended = try storeCall { () throws(StoreError) in try store.deleteExpired(touchedBefore: cutoff, ending: ending) }
        } catch {
            if ending != nil { feedWriteFailed() }
            throw error
        }
        sessionBytes.release(ended.reduce(0) { $0 + $1.bytes })
        releaseEventBytes()
        // Other processes' sessions count too: their total is read again (what changes while it
        // is read may be off by those changes until the next sweep).
        if store is any ChangeFeed, let total = try? store.storedSessionBytes() {
            _ = store.takeReleasedEventBytes()
            sessionBytes.recount(total)
        }
        let expired = ended.map(\.id)
        // The sessions are gone from the store: their watchers and answers go too, whether or not
        // the feed's sweep below succeeds.
        defer {
            if !expired.isEmpty { feedSignal() }
            // The store deleted their answers, and every change's answer older than the TTL.
            answers.forget(sessions: expired)
            answers.expire(before: cutoff)
            for id in expired { live.end(id, .expired) }
        }
        if let settings = configuration.feed {
            _ = try storeCall { () throws(StoreError) in
                try store.sweepFeed(olderThan: time - settings.retention, maxBytes: settings.maxBytes)
            }
        }
        return expired.count
    }
}
