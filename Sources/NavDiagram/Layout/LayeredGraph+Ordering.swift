/// Crossing reduction: the order of the nodes within each rank.
extension LayeredGraph {
    /// The most barycenter sweeps (alternately up and down) crossing reduction makes; it stops
    /// earlier when there are no crossings left or three sweeps in a row found no better order.
    static let maxSweeps = 12

    /// Orders every layer: first each rank by the mean position of the nodes above it (boxes
    /// nothing above leads to keep their name order, after the others), then up and down
    /// barycenter sweeps, keeping the order with the fewest crossings seen.
    /// - Returns: the crossings of the order kept.
    @discardableResult
    mutating func orderLayers() -> Int {
        let rankCount = (rank.max() ?? -1) + 1
        layers = Array(repeating: [], count: rankCount)
        for node in 0..<nodeCount { layers[rank[node]].append(node) }
        position = Array(repeating: 0, count: nodeCount)
        guard rankCount > 0 else { return 0 }
        setPositions(of: 0)
        for layer in 1..<rankCount {
            sort(layer, by: above, unconnectedLast: true)
        }
        var best = layers
        var fewest = crossings()
        var stale = 0
        var sweep = 0
        while sweep < Self.maxSweeps, fewest > 0, stale < 3 {
            if sweep % 2 == 0 {
                for layer in stride(from: rankCount - 2, through: 0, by: -1) { sort(layer, by: below, unconnectedLast: false) }
            } else {
                for layer in 1..<rankCount { sort(layer, by: above, unconnectedLast: false) }
            }
            let count = crossings()
            if count < fewest {
                fewest = count
                best = layers
                stale = 0
            } else {
                stale += 1
            }
            sweep += 1
        }
        layers = best
        for layer in layers.indices { setPositions(of: layer) }
        return fewest
    }

    private mutating func setPositions(of layer: Int) {
        for (index, node) in layers[layer].enumerated() { position[node] = index }
    }

    /// Sorts a layer by the mean position of each node's neighbours in the adjacent layer. A
    /// node without any keeps its place (its own position is its key), or goes last.
    private mutating func sort(_ layer: Int, by neighbours: [[Int]], unconnectedLast: Bool) {
        let nodes = layers[layer]
        var keys: [(key: Double, tie: Int, node: Int)] = []
        keys.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            let adjacent = neighbours[node]
            if adjacent.isEmpty {
                keys.append((unconnectedLast ? Double.greatestFiniteMagnitude : Double(index), node, node))
            } else {
                var sum = 0
                for other in adjacent { sum += position[other] }
                keys.append((Double(sum) / Double(adjacent.count), unconnectedLast ? node : index, node))
            }
        }
        keys.sort { $0.key != $1.key ? $0.key < $1.key : $0.tie < $1.tie }
        layers[layer] = keys.map(\.node)
        setPositions(of: layer)
    }

    /// Crossings between every pair of adjacent layers: for each pair, the inversions among the
    /// lower ends of its segments taken in the order of their upper ends (O(E log V), with a
    /// Fenwick tree).
    func crossings() -> Int {
        var total = 0
        var lowerEnds: [Int] = []
        for layer in layers.indices.dropLast() {
            let lowerCount = layers[layer + 1].count
            lowerEnds.removeAll(keepingCapacity: true)
            for node in layers[layer] {
                let start = lowerEnds.count
                for next in below[node] { lowerEnds.append(position[next]) }
                lowerEnds[start...].sort()
            }
            var tree = Array(repeating: 0, count: lowerCount + 1)
            var seen = 0
            for end in lowerEnds {
                // Segments seen so far whose lower end lies right of this one cross it.
                var index = end + 1
                var notRight = 0
                while index > 0 {
                    notRight += tree[index]
                    index -= index & -index
                }
                total += seen - notRight
                seen += 1
                index = end + 1
                while index <= lowerCount {
                    tree[index] += 1
                    index += index & -index
                }
            }
        }
        return total
    }
}
