/// DeepTransition's diff of two paths or stages, by position: the longest common prefix is kept,
/// the rest of the source is removed, the rest of the target is added in order.
///
/// The one rule behind both `Path.diff(from:to:)` (and so the conformance vectors) and a
/// navigation's plan (`Navigator.plan(from:to:counter:)`), whatever the components are: paths
/// compare `PathComponent`s, a navigation compares the stage's screens with its typed target.
struct StageDiff: Hashable {
    /// How many leading components the source and the target share.
    let common: Int
    let sourceCount: Int
    let targetCount: Int

    /// The diff of a source of `sourceCount` components and a target of `targetCount`.
    /// - Parameter same: whether the source's and the target's components at this position (below
    ///   both counts) are the same component.
    @inline(__always)
    init(sourceCount: Int, targetCount: Int, same: (Int) throws -> Bool) rethrows {
        var common = 0
        while common < sourceCount, common < targetCount, try same(common) {
            common += 1
        }
        self.common = common
        self.sourceCount = sourceCount
        self.targetCount = targetCount
    }

    /// The positions of the source that are removed, root first (they go in one step, top first).
    var removed: Range<Int> { common..<sourceCount }
    /// The positions of the target that are added, in order.
    var added: Range<Int> { common..<targetCount }
    /// Whether source and target are the same: nothing to remove or add.
    var isEmpty: Bool { common == sourceCount && common == targetCount }
}
