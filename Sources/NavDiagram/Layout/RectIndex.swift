/// Rectangles by the grid cells they cover, to find overlaps without comparing every pair.
struct RectIndex {
    let cellSize: Double
    private var cells: [Cell: [Int]] = [:]
    private var rects: [Rect] = []

    private struct Cell: Hashable {
        var column: Int
        var row: Int
    }

    init(cellSize: Double) {
        self.cellSize = cellSize
    }

    private func cells(of rect: Rect) -> [Cell] {
        let columns = Int((rect.x / cellSize).rounded(.down))...Int((rect.maxX / cellSize).rounded(.down))
        let rows = Int((rect.y / cellSize).rounded(.down))...Int((rect.maxY / cellSize).rounded(.down))
        var result: [Cell] = []
        for column in columns {
            for row in rows { result.append(Cell(column: column, row: row)) }
        }
        return result
    }

    mutating func insert(_ rect: Rect) {
        rects.append(rect)
        for cell in cells(of: rect) { cells[cell, default: []].append(rects.count - 1) }
    }

    func intersects(_ rect: Rect) -> Bool {
        for cell in cells(of: rect) {
            for other in cells[cell] ?? [] where rects[other].intersects(rect) { return true }
        }
        return false
    }
}
