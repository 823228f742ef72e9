/// A point of the drawing, in pixels (y grows downwards, as in SVG).
struct Point: Sendable, Hashable {
    var x: Double
    var y: Double

    func offset(_ dx: Double, _ dy: Double) -> Point {
        Point(x: x + dx, y: y + dy)
    }
}

/// An axis-aligned rectangle: its top-left corner and size.
struct Rect: Sendable, Hashable {
    var x: Double
    var y: Double
    var width: Double
    var height: Double

    var maxX: Double { x + width }
    var maxY: Double { y + height }
    var midX: Double { x + width / 2 }
    var midY: Double { y + height / 2 }

    init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    init(center: Point, width: Double, height: Double) {
        self.init(x: center.x - width / 2, y: center.y - height / 2, width: width, height: height)
    }

    /// Whether the two share interior points (touching edges do not count).
    func intersects(_ other: Rect) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }

    /// Whether `point` lies on the rectangle's outline, within `tolerance`.
    func hasOnOutline(_ point: Point, tolerance: Double = 0.01) -> Bool {
        let withinX = point.x >= x - tolerance && point.x <= maxX + tolerance
        let withinY = point.y >= y - tolerance && point.y <= maxY + tolerance
        let onVertical = abs(point.x - x) <= tolerance || abs(point.x - maxX) <= tolerance
        let onHorizontal = abs(point.y - y) <= tolerance || abs(point.y - maxY) <= tolerance
        return (onVertical && withinY) || (onHorizontal && withinX)
    }

    func offset(_ dx: Double, _ dy: Double) -> Rect {
        Rect(x: x + dx, y: y + dy, width: width, height: height)
    }
}

/// One piece of an edge's path, from where the previous piece ended.
enum PathSegment: Sendable, Hashable {
    case line(to: Point)
    /// A cubic Bézier curve.
    case curve(Point, Point, to: Point)

    var end: Point {
        switch self {
        case .line(let to), .curve(_, _, let to): to
        }
    }

    /// The points that bound the piece: its end, and a curve's control points (a cubic
    /// Bézier curve lies within the hull of its control points).
    var hull: [Point] {
        switch self {
        case .line(let to): [to]
        case .curve(let first, let second, let to): [first, second, to]
        }
    }

    /// The point at parameter `t` (0…1) of the piece that starts at `start`.
    func point(at t: Double, from start: Point) -> Point {
        switch self {
        case .line(let to):
            return Point(x: start.x + (to.x - start.x) * t, y: start.y + (to.y - start.y) * t)
        case .curve(let first, let second, let to):
            let u = 1 - t
            let a = u * u * u
            let b = 3 * u * u * t
            let c = 3 * u * t * t
            let d = t * t * t
            return Point(x: a * start.x + b * first.x + c * second.x + d * to.x, y: a * start.y + b * first.y + c * second.y + d * to.y)
        }
    }

    func offset(_ dx: Double, _ dy: Double) -> PathSegment {
        switch self {
        case .line(let to): .line(to: to.offset(dx, dy))
        case .curve(let first, let second, let to): .curve(first.offset(dx, dy), second.offset(dx, dy), to: to.offset(dx, dy))
        }
    }
}

/// A path: where it starts and its pieces.
struct PathGeometry: Sendable, Hashable {
    var start: Point
    var segments: [PathSegment]

    var end: Point { segments.last?.end ?? start }

    /// The same path drawn the other way.
    var reversed: PathGeometry {
        var points = [start]
        for segment in segments { points.append(segment.end) }
        var result: [PathSegment] = []
        for index in segments.indices.reversed() {
            let from = points[index]
            switch segments[index] {
            case .line: result.append(.line(to: from))
            case .curve(let first, let second, _): result.append(.curve(second, first, to: from))
            }
        }
        return PathGeometry(start: end, segments: result)
    }

    func offset(_ dx: Double, _ dy: Double) -> PathGeometry {
        PathGeometry(start: start.offset(dx, dy), segments: segments.map { $0.offset(dx, dy) })
    }
}
