/// The graph the layered-layout steps work on. Nodes are numbered: the diagram's boxes first
/// (its scenes in order, then the "any screen" node when there are global links), then one
/// dummy node for every rank a long edge passes through, so that every layered segment joins
/// two adjacent ranks.
struct LayeredGraph {
    /// An edge between boxes, as the layout sees it.
    struct Edge {
        var from: Int
        var to: Int
    }

    /// How an edge is laid out.
    enum Shape: Equatable {
        /// From a box to itself.
        case selfLoop
        /// Between two boxes of the same rank.
        case flat
        /// Through `chain`, upper end first: the boxes at its ends and a dummy for every rank
        /// between them. `downwards` when the edge goes from the upper end to the lower one.
        case layered(chain: [Int], downwards: Bool)
        /// Between boxes more than one rank apart, drawn directly: the dummy budget was spent.
        case direct(upper: Int, lower: Int, downwards: Bool)
    }

    let boxCount: Int
    var rank: [Int]
    /// Node sizes; a dummy has the width of the lane it keeps free and no height.
    var width: [Double]
    var height: [Double]
    /// Room a box needs right of itself for its self-loops and their labels.
    var rightExtra: [Double]
    var shapes: [Shape] = []
    /// Neighbours one rank down and one rank up, one entry per layered segment.
    var below: [[Int]] = []
    var above: [[Int]] = []
    /// The nodes of each rank, in drawing order (left to right).
    var layers: [[Int]] = []
    /// Each node's index within its layer.
    var position: [Int] = []
    /// Each node's horizontal centre.
    var x: [Double] = []
    /// The first rank of the scenes nothing from the start reaches, if there are any.
    var firstUnreachedRank: Int?

    var nodeCount: Int { rank.count }

    func isDummy(_ node: Int) -> Bool { node >= boxCount }

    init(boxWidths: [Double], boxHeights: [Double], rightExtra: [Double]) {
        boxCount = boxWidths.count
        width = boxWidths
        height = boxHeights
        self.rightExtra = rightExtra
        rank = Array(repeating: -1, count: boxWidths.count)
    }
}

// MARK: Ranking

extension LayeredGraph {
    /// Ranks by breadth-first search: the "any screen" node (when there is one) alone in rank 0,
    /// the start path's first scene in the next rank, then every scene one rank below the
    /// nearest scene that leads to it. The start path's scenes lead each to the next, and the
    /// first to every global link's target (a global link can be taken from the start screen).
    /// Scenes nothing reached start together in the rank after the last, those nothing among
    /// them leads to first, and what they lead to follows below them.
    ///
    /// - Parameters:
    ///   - successors: each box's tab and link targets, in the diagram's order.
    ///   - startPath: the boxes of the start path, root first.
    ///   - anyNode: the "any screen" box, if any.
    ///   - globalTargets: the boxes global links lead to.
    mutating func assignRanks(successors: [[Int]], startPath: [Int], anyNode: Int?, globalTargets: [Int]) {
        var queue: [Int] = []
        queue.reserveCapacity(boxCount)
        var head = 0
        var extra = Array(repeating: [Int](), count: boxCount)
        for (index, node) in startPath.enumerated() where index + 1 < startPath.count {
            extra[node].append(startPath[index + 1])
        }
        if let first = startPath.first { extra[first] += globalTargets }
        let base = anyNode == nil ? 0 : 1
        if let anyNode { rank[anyNode] = 0 }

        func search(using extra: [[Int]]) {
            while head < queue.count {
                let node = queue[head]
                head += 1
                for next in extra[node] + successors[node] where rank[next] < 0 {
                    rank[next] = rank[node] + 1
                    queue.append(next)
                }
            }
        }

        if let first = startPath.first, rank[first] < 0 {
            rank[first] = base
            queue.append(first)
        }
        search(using: extra)

        // The unreached: those no other unreached scene leads to start the rank after the last,
        // together; scenes left over lie on cycles of their own and start the same rank, one
        // search each, in name order.
        let none = Array(repeating: [Int](), count: boxCount)
        let unreachedRank = max(base, (rank.max() ?? -1) + 1)
        var ledTo = Array(repeating: false, count: boxCount)
        for node in 0..<boxCount where rank[node] < 0 {
            for next in successors[node] where next != node && rank[next] < 0 { ledTo[next] = true }
        }
        if rank.contains(-1) { firstUnreachedRank = unreachedRank }
        for node in 0..<boxCount where rank[node] < 0 && !ledTo[node] {
            rank[node] = unreachedRank
            queue.append(node)
        }
        search(using: none)
        for node in 0..<boxCount where rank[node] < 0 {
            rank[node] = unreachedRank
            queue.append(node)
            search(using: none)
        }
    }
}

// MARK: Long edges

extension LayeredGraph {
    /// The most dummy nodes a layout makes. Past it, the longest edges are drawn directly
    /// rather than through lanes of their own, so that the layout's cost stays proportional to
    /// the graph's size whatever its shape (a back edge across a thousand ranks would otherwise
    /// make a thousand nodes).
    static let dummyBudget = 20_000

    /// Gives every edge its shape, making the dummies of layered ones; the shortest edges get
    /// lanes first.
    mutating func addEdges(_ edges: [Edge], dummyWidth: Double) {
        shapes = Array(repeating: .flat, count: edges.count)
        var budget = Self.dummyBudget
        let order = edges.indices.sorted { left, right in
            let a = abs(rank[edges[left].from] - rank[edges[left].to])
            let b = abs(rank[edges[right].from] - rank[edges[right].to])
            return a != b ? a < b : left < right
        }
        below = Array(repeating: [], count: boxCount)
        above = Array(repeating: [], count: boxCount)
        for index in order {
            let edge = edges[index]
            if edge.from == edge.to {
                shapes[index] = .selfLoop
                continue
            }
            let fromRank = rank[edge.from]
            let toRank = rank[edge.to]
            if fromRank == toRank {
                shapes[index] = .flat
                continue
            }
            let downwards = fromRank < toRank
            let upper = downwards ? edge.from : edge.to
            let lower = downwards ? edge.to : edge.from
            let span = abs(toRank - fromRank)
            guard span - 1 <= budget else {
                shapes[index] = .direct(upper: upper, lower: lower, downwards: downwards)
                continue
            }
            budget -= span - 1
            var chain = [upper]
            for step in 1..<span {
                let dummy = rank.count
                rank.append(rank[upper] + step)
                width.append(dummyWidth)
                height.append(0)
                rightExtra.append(0)
                below.append([])
                above.append([])
                chain.append(dummy)
            }
            chain.append(lower)
            for (top, bottom) in zip(chain, chain.dropFirst()) {
                below[top].append(bottom)
                above[bottom].append(top)
            }
            shapes[index] = .layered(chain: chain, downwards: downwards)
        }
    }
}
