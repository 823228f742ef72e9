import NavJSON

/// A store that also keeps graph documents, so sessions find their graph version after a
/// restart and every process sharing the store serves every version.
///
/// The store allocates version numbers: a number names one document everywhere.
package protocol GraphStore: Sendable {
    /// Stores `document` as the next version of graph `name`, unless the latest stored version
    /// already is this document (compared as canonical JSON text).
    /// - Returns: the version that holds the document, and whether this call stored it.
    func storeGraph(_ document: JSONValue, name: String) throws(StoreError) -> (version: Int, stored: Bool)
    /// Every stored graph version, oldest first.
    func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)]
    /// One stored version, or `nil`.
    func graph(_ name: String, version: Int) throws(StoreError) -> JSONValue?
    /// The latest stored version of `name` if it is newer than `known`, else `nil`
    /// (then no document is read).
    func latestGraph(_ name: String, newerThan known: Int) throws(StoreError) -> (document: JSONValue, version: Int)?
    /// The latest stored version of every graph.
    func latestGraphVersions() throws(StoreError) -> [(name: String, version: Int)]
    /// The name of the graph stored first, or `nil` when the store holds none.
    func firstGraphName() throws(StoreError) -> String?
    /// Removes one stored version (`DELETE /v1/graphs/{name}?version=N`).
    /// - Returns: whether it was stored.
    func removeGraph(_ name: String, version: Int) throws(StoreError) -> Bool
}
