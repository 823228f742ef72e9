import NavCore

extension LifecycleEvent {
    /// Events of every kind with every combination of the optional strings (screen, scene, from,
    /// to: sixteen per kind), for tests that compare two ways of writing events. The strings are
    /// drawn from `texts` in turn; `seqs` and `transitions` are cycled through (each seq plus the
    /// kind's position, so that no two kinds repeat each other exactly).
    static func everyShape(texts: [String?], seqs: [Int], transitions: [Int]) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        for (position, kind) in Kind.allCases.enumerated() {
            for present in 0..<16 {
                func text(_ bit: Int) -> String? { present & 1 << bit == 0 ? nil : texts[(position + present + bit) % texts.count] }
                events.append(
                    LifecycleEvent(
                        seq: seqs[present % seqs.count] + position, type: kind, screen: text(0), scene: text(1),
                        transition: transitions[present % transitions.count], from: text(2), to: text(3)
                    ))
            }
        }
        return events
    }
}
