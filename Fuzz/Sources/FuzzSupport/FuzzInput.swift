/// The bytes libFuzzer hands a target, read front to back as a stream of choices.
///
/// Every read is total: past the end it answers zero or empty, so any input is a valid program
/// and the fuzzer's mutations (insert, erase, copy a run) keep meaning something.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, 0 past the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A number in `0..<count` (one byte; `count` ≤ 256 is what the targets need).
    public mutating func below(_ count: Int) -> Int {
        count <= 1 ? 0 : Int(byte()) % count
    }

    public mutating func pick<Element>(_ options: [Element]) -> Element {
        options[below(options.count)]
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// The next `count` bytes at most.
    public mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return bytes[position..<end]
    }

    /// A run of raw bytes whose length comes first (one byte), as text (invalid UTF-8 repaired,
    /// as a server reading a request does).
    public mutating func text(maximum: Int = 255) -> String {
        String(decoding: take(min(maximum, Int(byte()))), as: UTF8.self)
    }

    /// Everything not read yet.
    public mutating func rest() -> ArraySlice<UInt8> {
        take(bytes.count - position)
    }
}

/// Stops the fuzzer with a finding: libFuzzer reports the trap as a crash and saves the input.
public func violated(_ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) -> Never {
    fatalError("fuzz invariant violated: \(message())", file: file, line: line)
}

/// `violated` unless `condition` holds.
public func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { violated(message(), file: file, line: line) }
}

/// Calls `body` with libFuzzer's input as an array.
public func withFuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int, _ body: ([UInt8]) -> Void) {
    guard let data, size > 0 else {
        body([])
        return
    }
    body(Array(UnsafeBufferPointer(start: data, count: size)))
}
