/// Horizontal coordinates: each node as near the mean of its neighbours as its layer's order
/// and spacing allow.
extension LayeredGraph {
    /// Sweeps of coordinate assignment (alternately from the neighbours above and below),
    /// before a last one that takes both.
    static let placementSweeps = 8

    /// Gaps between neighbours in a layer.
    struct Spacing {
        var boxes: Double
        var boxAndDummy: Double
        var dummies: Double
    }

    /// Places every node. Each sweep solves, layer by layer, the closest placement to the
    /// neighbours' mean that keeps the layer's order and gaps — a least-squares problem under
    /// order constraints, solved exactly by pooling adjacent violators (``Self.pooled``).
    /// Dummies weigh more than boxes, so long edges run straight.
    mutating func placeHorizontally(spacing: Spacing) {
        x = Array(repeating: 0, count: nodeCount)
        for layer in layers.indices {
            place(layer, spacing: spacing, desired: layers[layer].map { _ in (0, 1) as (x: Double, weight: Double)? })
        }
        for sweep in 0..<Self.placementSweeps {
            let fromAbove = sweep % 2 == 0
            let order = fromAbove ? Array(layers.indices) : layers.indices.reversed()
            for layer in order {
                let desired = layers[layer].map { node in target(node, fromAbove ? [above[node]] : [below[node]]) }
                place(layer, spacing: spacing, desired: desired)
            }
        }
        for layer in layers.indices {
            place(layer, spacing: spacing, desired: layers[layer].map { node in target(node, [above[node], below[node]]) })
        }
    }

    /// Where a node would like to be, and how much that matters: the mean of its neighbours in
    /// `lists`; without any there, where it is (barely). `nil` for a node with no neighbour at
    /// all, which is packed against the nodes beside it instead.
    private func target(_ node: Int, _ lists: [[Int]]) -> (x: Double, weight: Double)? {
        guard !above[node].isEmpty || !below[node].isEmpty else { return nil }
        var sum = 0.0
        var count = 0
        for list in lists {
            for other in list {
                sum += x[other]
                count += 1
            }
        }
        guard count > 0 else { return (x[node], 0.05) }
        return (sum / Double(count), isDummy(node) ? 4 : 1)
    }

    /// Places one layer's nodes as near `desired` (one entry per node, in layer order) as the
    /// order and gaps allow.
    private mutating func place(_ layer: Int, spacing: Spacing, desired: [(x: Double, weight: Double)?]) {
        let nodes = layers[layer]
        guard !nodes.isEmpty else { return }
        var offsets = [0.0]
        offsets.reserveCapacity(nodes.count)
        for (left, right) in zip(nodes, nodes.dropFirst()) {
            let gap: Double
            switch (isDummy(left), isDummy(right)) {
            case (false, false): gap = spacing.boxes
            case (true, true): gap = spacing.dummies
            default: gap = spacing.boxAndDummy
            }
            let last = offsets[offsets.count - 1]
            offsets.append(last + width[left] / 2 + rightExtra[left] + gap + width[right] / 2)
        }
        var targets: [(value: Double, weight: Double)] = []
        targets.reserveCapacity(nodes.count)
        for index in nodes.indices {
            targets.append(desired[index].map { ($0.x - offsets[index], $0.weight) } ?? (0, 0))
        }
        // A node with no neighbours wants what the node left of it wants (relative to the
        // offsets: to sit right beside it), or, first in its layer, what the first node right of
        // it with neighbours wants; a layer of such nodes only is centred.
        if let anchor = desired.firstIndex(where: { $0 != nil }) {
            for index in nodes.indices where desired[index] == nil {
                targets[index] = (index > 0 && index > anchor ? targets[index - 1].value : targets[anchor].value, 0.05)
            }
        } else {
            let middle = (offsets.last ?? 0) / 2
            for index in nodes.indices { targets[index] = (-middle, 1) }
        }
        let solved = Self.pooled(targets)
        for (index, node) in nodes.enumerated() { x[node] = solved[index] + offsets[index] }
    }

    /// The non-decreasing sequence closest to `targets` in weighted least squares (pool
    /// adjacent violators, O(n)).
    static func pooled(_ targets: [(value: Double, weight: Double)]) -> [Double] {
        var blocks: [(mean: Double, weight: Double, count: Int)] = []
        blocks.reserveCapacity(targets.count)
        for target in targets {
            var block = (mean: target.value, weight: target.weight, count: 1)
            while let last = blocks.last, last.mean >= block.mean {
                blocks.removeLast()
                let weight = last.weight + block.weight
                block = ((last.mean * last.weight + block.mean * block.weight) / weight, weight, last.count + block.count)
            }
            blocks.append(block)
        }
        var result: [Double] = []
        result.reserveCapacity(targets.count)
        for block in blocks {
            result.append(contentsOf: repeatElement(block.mean, count: block.count))
        }
        return result
    }
}
