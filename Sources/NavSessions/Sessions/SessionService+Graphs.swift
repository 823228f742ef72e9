import NavCore

/// The use cases an admin runs across a graph's sessions: upgrading them all, and removing a
/// graph version none of them runs on (docs/design.md, "Graph upgrades", "Graphs").
extension SessionService {
    /// What an admin's upgrade of every session of a graph did (docs/design.md, "Graph upgrades").
    package struct UpgradeReport: Sendable {
        package var upgraded: [String] = []
        /// Sessions already on the version.
        package var unchanged: [String] = []
        package var refused: [(id: String, error: ServiceError)] = []
    }

    /// Upgrades every session of graph `name` to version `wanted` (or the newest), each as its own
    /// change, in pages of ids; a session refused or gone meanwhile is reported, not fatal.
    package func upgradeAll(graph name: String, to wanted: Int?, credentials: Credentials) throws(ServiceError) -> UpgradeReport {
        _ = try upgradeTarget(graph: name, wanted)
        var report = UpgradeReport()
        var after = ""
        while true {
            let page = try storeCall { () throws(StoreError) in try store.ids(ofGraph: name, after: after, limit: 500) }
            guard let last = page.last else { return report }
            for id in page {
                do {
                    let changed = try apply(.upgrade(version: wanted), to: id, credentials: credentials, ifMatch: nil) {
                        !$0.events.isEmpty
                    }
                    if changed { report.upgraded.append(id) } else { report.unchanged.append(id) }
                } catch let error as ServiceError {
                    if error.code != .sessionNotFound { report.refused.append((id, error)) }
                } catch {
                    report.refused.append((id, ServiceError(.internal, "\(error)")))
                }
            }
            after = last
        }
    }

    /// Removes version `version` of graph `name` from the daemon and its store
    /// (`DELETE /v1/graphs/{name}?version=N`, docs/design.md "Graphs").
    ///
    /// The newest version stays (new sessions start there), and so does a version any session
    /// runs on: every session of the graph is read, a page at a time, as an upgrade of them all
    /// reads them. A session that no longer loads runs on nothing and does not hold its version.
    /// - Returns: false when there is no such version.
    /// - Throws: `graphInUse` for the newest version or one in use; nothing is removed then.
    package func removeGraphVersion(_ name: String, version: Int) throws(ServiceError) -> Bool {
        let found: GraphVersion?
        do {
            found = try graphs.version(name, version, readingThrough: true)
        } catch {
            throw ServiceError(storeError: error, "could not read the stored graphs")
        }
        guard found != nil else { return false }
        if let latest = try graphs.latest(name), latest.version <= version {
            throw ServiceError(
                .graphInUse, "version \(version) is the newest of graph '\(name)': new sessions start on it; upload another first")
        }
        var after = ""
        while true {
            let page = try storeCall { () throws(StoreError) in try store.ids(ofGraph: name, after: after, limit: 500) }
            guard let last = page.last else { break }
            for id in page {
                let session: StoredSession?
                do {
                    session = try store.load(id)
                } catch let error where error.kind == .incompatible {
                    continue
                } catch {
                    throw ServiceError(storeError: error, "could not read the sessions of graph '\(name)'")
                }
                if let session, session.graphVersion == version {
                    throw ServiceError(
                        .graphInUse, "session \(id) runs on version \(version) of graph '\(name)'; upgrade or delete it first")
                }
            }
            after = last
        }
        return try graphs.remove(name, version: version)
    }
}
