import NavCore

/// What a create or a change must make room for before it is written, in the daemon's budgets:
/// the session's bytes (`session_bytes`) and the answer kept under its `Idempotency-Key`
/// (`idempotency_bytes`). A refusal writes nothing.
extension SessionService {
    /// Counts `session` in the `session_bytes` budget (``SessionStore/sessionBytes(of:)``, keeping
    /// a snapshot written for it for the store to write: ``StoredSession/encodedSnapshot``), and
    /// takes what it adds to what the session counted before (its ``StoredSession/storedBytes``),
    /// with what its change's `events` add to its retained ones: their JSON (`json`), which
    /// SQLite and PostgreSQL keep as it is (the memory store packs it, and gives back what packing
    /// saved as it writes them). A session's retained events count with it, so that a thousand
    /// results of 16 KiB each take room as a state of as many bytes would. What the store let go
    /// of its retained events since the last change is given back first.
    /// - Returns: what was taken (0 for a change that adds nothing), to give back if the write
    ///   does not happen, or minus what the write, once made, gives back.
    /// - Throws: 503 `over_capacity` when the budget cannot take what it adds.
    func charge(_ session: inout StoredSession, events: [LifecycleEvent], json: [UInt8]) throws(ServiceError) -> Int {
        releaseEventBytes()
        let before = session.storedBytes
        session.encodedSnapshot = nil
        (session.storedBytes, session.encodedSnapshot) = store.sessionBytes(of: session)
        let growth = session.storedBytes - before + (events.isEmpty ? 0 : json.count)
        guard growth > 0 else { return growth }
        guard sessionBytes.acquire(growth) || makeRoom(growth, droppingEventsOf: session.id) else {
            var refusal = ServiceError(
                .overCapacity,
                "the daemon's sessions fill their \(sessionBytes.limit) bytes (--max-session-bytes): this would add \(growth); retry once sessions are deleted or expire"
            )
            refusal.retryAfter = 60
            throw refusal
        }
        return growth
    }

    /// A full budget's room for a change of session `id`: its own retained events are dropped,
    /// and `growth` taken if that made room. Retained events are a replay buffer that only new
    /// events trim: counted in a full budget they would otherwise block the very changes that
    /// trim them, and every session would stay refused until some were deleted. The session
    /// pays with its own history, never another's; a refused change may still have dropped it.
    /// - Returns: whether `growth` was taken.
    private func makeRoom(_ growth: Int, droppingEventsOf id: String) -> Bool {
        guard (try? store.dropRetainedEvents(of: id)) != nil else { return false }
        releaseEventBytes()
        return sessionBytes.acquire(growth)
    }

    /// Settles ``charge(_:events:json:)``'s `growth` once the write is known: given back when nothing
    /// was written; when it was, what the session no longer takes is given back.
    func settle(_ growth: Int, written: Bool) {
        if written ? growth < 0 : growth > 0 { sessionBytes.release(abs(growth)) }
        releaseEventBytes()
    }

    /// Gives back to `session_bytes` what the store let go of sessions' retained events
    /// (``SessionStore/takeReleasedEventBytes()``): before and after every change, at every
    /// delete and sweep, and before `/metrics` shows the budget.
    package func releaseEventBytes() {
        let released = store.takeReleasedEventBytes()
        if released != 0 { sessionBytes.release(released) }
    }

    /// Makes room for `answer` among the kept answers (``KeptAnswerLedger``) before its change is
    /// written, deleting from the store the answers forgotten for it; refused (429, or 503 when
    /// the daemon's budget is full) when that would forget one younger than a minute.
    func admit(_ answer: KeptAnswer, at time: Int64) throws(ServiceError) {
        let forgotten: [String]
        do {
            forgotten = try answers.admit(.init(key: answer.key, session: answer.session, cost: answer.cost, createdAt: time), now: time)
        } catch {
            var refusal: ServiceError
            switch error {
            case .session(let wait):
                refusal = ServiceError(
                    .tooManyRequests,
                    "this session's answers kept under an Idempotency-Key fill its \(answers.perSession) bytes, none old enough to be forgotten; retry later"
                )
                refusal.retryAfter = Int((wait + 999) / 1000)
            case .daemon(let wait):
                refusal = ServiceError(
                    .overCapacity,
                    "the daemon's answers kept under an Idempotency-Key fill its budget, none old enough to be forgotten; retry later")
                refusal.retryAfter = Int((wait + 999) / 1000)
            }
            throw refusal
        }
        guard !forgotten.isEmpty, store.keepsAnswers else { return }
        try storeCall { () throws(StoreError) in try store.forget(answers: forgotten) }
    }

    /// ``admit(_:at:)`` for the answer of a change that took `charged` (``charge(_:events:json:)``), if it
    /// keeps one: what it took is given back when the answer is refused.
    func admit(_ answer: KeptAnswer?, at time: Int64, charged: Int) throws(ServiceError) {
        guard let answer else { return }
        do {
            try admit(answer, at: time)
        } catch {
            settle(charged, written: false)
            throw error
        }
    }
}
