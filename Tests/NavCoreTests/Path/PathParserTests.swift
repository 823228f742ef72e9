import NavCore
import Testing

/// The strict DeepTransition grammar (docs/design.md, "Paths"): what parses, how it prints, and where it breaks.
@Suite struct PathParserTests {
    // MARK: Valid expressions

    /// An expression a client may send and its canonical print.
    struct Valid: CustomTestStringConvertible, Sendable {
        let input: String
        let canonical: String
        var testDescription: String { input.isEmpty ? "(empty)" : input }
    }

    static let valid: [Valid] = [
        // Absolute.
        .init(input: "^/top", canonical: "^/top"),
        .init(input: "^top", canonical: "^top"),
        .init(input: "^/top/home#friend/show_friend(name=ken)", canonical: "^/top/home#friend/show_friend(name=ken)"),
        .init(input: "^!login", canonical: "^!login"),
        .init(input: "^", canonical: "^"),
        // Relative.
        .init(input: "", canonical: ""),
        .init(input: "list_news", canonical: "list_news"),
        .init(input: "/list_news", canonical: "/list_news"),
        .init(input: "list_news/show_news(id=9)", canonical: "list_news/show_news(id=9)"),
        .init(input: "!login", canonical: "!login"),
        .init(input: "!/list_coupon/show_coupon(id=88)", canonical: "!/list_coupon/show_coupon(id=88)"),
        .init(input: "#news", canonical: "#news"),
        .init(input: "#/settings!/menu", canonical: "#/settings!/menu"),
        .init(input: "a.b-c_D9", canonical: "a.b-c_D9"),
        // `..` chains.
        .init(input: "..", canonical: ".."),
        .init(input: "../..", canonical: "../.."),
        .init(input: "../../..", canonical: "../../.."),
        .init(input: "../profile", canonical: "../profile"),
        .init(input: "../../profile(x=1)", canonical: "../../profile(x=1)"),
        .init(input: "..!login", canonical: "..!login"),
        .init(input: "..!..!profile", canonical: "../..!profile"),
        .init(input: "..#news", canonical: "..#news"),
        .init(input: "..!/menu/item", canonical: "..!/menu/item"),
        // `up`.
        .init(input: "up", canonical: "up(n=1)"),
        .init(input: "up(n=1)", canonical: "up(n=1)"),
        .init(input: "up(n=3)", canonical: "up(n=3)"),
        .init(input: "up(n=12)", canonical: "up(n=12)"),
        // Parameters: keys sorted, values escaped only where they must be.
        .init(input: "a(z=1,a=2,m=3)", canonical: "a(a=2,m=3,z=1)"),
        .init(input: "a(q=a%2Cb)", canonical: "a(q=a%2Cb)"),
        .init(input: "a(q=a%2cb)", canonical: "a(q=a%2Cb)"),
        .init(input: "a(q=%28x%29)", canonical: "a(q=%28x%29)"),
        .init(input: "a(q=100%25)", canonical: "a(q=100%25)"),
        .init(input: "a(q=a b)", canonical: "a(q=a%20b)"),
        .init(input: "a(q=%41%42)", canonical: "a(q=AB)"),
        .init(input: "a(q=)", canonical: "a(q=)"),
        .init(input: "a(q=,r=)", canonical: "a(q=,r=)"),
        .init(input: "a(q=x/y?z#w:v=u)", canonical: "a(q=x/y?z#w:v=u)"),
        .init(input: "a(q=!^..)", canonical: "a(q=!^..)"),
        .init(input: "a(q=日本)", canonical: "a(q=日本)"),
        .init(input: "a(q=%C3%A9)", canonical: "a(q=é)"),
        // Decoded in place when the result is ASCII, validated when it is not; short and long values.
        .init(input: "a(q=é%2C)", canonical: "a(q=é%2C)"),
        .init(input: "a(q=%C3%A9%2Cabcdefghijklmnop)", canonical: "a(q=é%2Cabcdefghijklmnop)"),
        .init(input: "a(q=%61bcdefghijklmnopq%72)", canonical: "a(q=abcdefghijklmnopqr)"),
        .init(
            input: "a(q=%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C)",
            canonical: "a(q=%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C%2C)"),
        .init(input: "a(q=%00%7F)", canonical: "a(q=%00%7F)"),
        .init(input: "/top!/menu#/settings", canonical: "/top!/menu#/settings")
    ]

    @Test(arguments: valid)
    func canonicalPrint(_ valid: Valid) throws {
        let expression = try PathExpression.parse(valid.input)
        #expect(expression.description == valid.canonical)
        // The canonical print is a fixed point and means the same thing.
        let reparsed = try PathExpression.parse(expression.description)
        #expect(reparsed.description == valid.canonical)
        #expect(reparsed == expression)
    }

    /// What an expression parses to, structurally.
    struct Structure: CustomTestStringConvertible, Sendable {
        let input: String
        let expected: PathExpression
        var testDescription: String { input }
    }

    static let structures: [Structure] = [
        .init(input: "^/top", expected: .absolute(Path([PathComponent(name: "top", container: .navigation)]))),
        .init(input: "^top", expected: .absolute(Path([PathComponent(name: "top")]))),
        .init(input: "up", expected: .up(1)),
        .init(input: "up(n=3)", expected: .up(3)),
        .init(input: "..", expected: .relative(ups: 1, path: Path())),
        .init(input: "../..", expected: .relative(ups: 2, path: Path())),
        .init(input: "../..!x", expected: .relative(ups: 2, path: Path([PathComponent(name: "x", segue: .modal)]))),
        .init(input: "..!..!x", expected: .relative(ups: 2, path: Path([PathComponent(name: "x", segue: .modal)]))),
        .init(
            input: "!/menu/item(k=v)",
            expected: .relative(
                ups: 0,
                path: Path([
                    PathComponent(name: "menu", segue: .modal, container: .navigation),
                    PathComponent(name: "item", params: ["k": "v"])
                ]))),
        .init(input: "a(q=a%2Cb)", expected: .relative(ups: 0, path: Path([PathComponent(name: "a", params: ["q": "a,b"])]))),
        .init(input: "a(q=)", expected: .relative(ups: 0, path: Path([PathComponent(name: "a", params: ["q": ""])]))),
        .init(
            input: "a(q=x/y?z#w:v=u)",
            expected: .relative(ups: 0, path: Path([PathComponent(name: "a", params: ["q": "x/y?z#w:v=u"])]))),
        .init(input: "a(q=%25%2C%29%28)", expected: .relative(ups: 0, path: Path([PathComponent(name: "a", params: ["q": "%,)("])]))),
        // `up` only means "go up" as a whole bare path; anywhere else it is a (reserved) scene name.
        .init(input: "/up", expected: .relative(ups: 0, path: Path([PathComponent(name: "up", container: .navigation)]))),
        .init(input: "up!x", expected: .relative(ups: 0, path: Path([PathComponent(name: "up"), PathComponent(name: "x", segue: .modal)]))),
        // Names may contain dots; only a bare `..` is "up one".
        .init(input: "..a", expected: .relative(ups: 0, path: Path([PathComponent(name: "..a")])))
    ]

    @Test(arguments: structures)
    func structure(_ structure: Structure) throws {
        #expect(try PathExpression.parse(structure.input) == structure.expected)
    }

    @Test func percentEncodedValueIsDecodedAndPrintedEscaped() throws {
        let path = try Path.parse("/top/search(q=a%2Cb,r=x%29y)")
        #expect(path.components[1].params == ["q": "a,b", "r": "x)y"])
        #expect(path.description == "/top/search(q=a%2Cb,r=x%29y)")
        #expect(try Path.parse(path.description) == path)
    }

    @Test func stagePathsRefuseClientOnlySyntax() throws {
        #expect(throws: PathError(offset: 0, reason: "'^' is only allowed at the start of a path a client sends")) {
            try Path.parse("^/top")
        }
        #expect((try? Path.parse("..")) == nil)
        #expect((try? Path.parse("../a")) == nil)
        // `up` in a stage path is only a name.
        #expect(try Path.parse("up") == Path([PathComponent(name: "up")]))
    }

    // MARK: Strict errors

    /// An invalid expression and the offset (in Unicode scalars) of the first offending character.
    struct Invalid: CustomTestStringConvertible, Sendable {
        let input: String
        let offset: Int
        let why: String
        var testDescription: String { "\(why): \(input)" }
    }

    static let invalid: [Invalid] = [
        // Unclosed `(`: the offset of the `(` that is never closed.
        .init(input: "/top(", offset: 4, why: "unclosed ("),
        .init(input: "/top(a", offset: 4, why: "unclosed ("),
        .init(input: "/top(a=", offset: 4, why: "unclosed ("),
        .init(input: "/top(a=1", offset: 4, why: "unclosed ("),
        .init(input: "/top(a=1,", offset: 4, why: "unclosed ("),
        .init(input: "/top(a=1,b=2", offset: 4, why: "unclosed ("),
        .init(input: "/x/top(a=%41", offset: 6, why: "unclosed ("),
        // Empty name.
        .init(input: "//a", offset: 1, why: "empty name"),
        .init(input: "/a/", offset: 3, why: "empty name"),
        .init(input: "/a//b", offset: 3, why: "empty name"),
        .init(input: "/", offset: 1, why: "empty name"),
        .init(input: "!", offset: 1, why: "empty name"),
        .init(input: "!/", offset: 2, why: "empty name"),
        .init(input: "/a#", offset: 3, why: "empty name"),
        .init(input: "/a!/!b", offset: 4, why: "empty name"),
        .init(input: "/(x=1)", offset: 1, why: "empty name"),
        // Empty key.
        .init(input: "/a(=1)", offset: 3, why: "empty key"),
        .init(input: "/a()", offset: 3, why: "empty key"),
        .init(input: "/a(x=1,)", offset: 7, why: "empty key"),
        .init(input: "/a(x=1,=2)", offset: 7, why: "empty key"),
        // Missing `=`.
        .init(input: "/a(x)", offset: 4, why: "missing ="),
        .init(input: "/a(x,y=1)", offset: 4, why: "missing ="),
        .init(input: "/a(x=1,y)", offset: 8, why: "missing ="),
        // Text after `)`.
        .init(input: "/a(x=1)b", offset: 7, why: "text after )"),
        .init(input: "/a(x=1)(y=2)", offset: 7, why: "text after )"),
        .init(input: "/a(x=1))", offset: 7, why: "text after )"),
        .init(input: "/a(x=1)/b(y=2)c", offset: 14, why: "text after )"),
        // A name with a character outside [A-Za-z0-9_.-].
        .init(input: "/a b", offset: 2, why: "bad name character"),
        .init(input: "/a$", offset: 2, why: "bad name character"),
        .init(input: "/$a", offset: 1, why: "bad name character"),
        .init(input: "/top/ne+ws", offset: 7, why: "bad name character"),
        .init(input: "/é", offset: 1, why: "bad name character"),
        .init(input: "/a(k y=1)", offset: 4, why: "bad key character"),
        .init(input: "/a(ké=1)", offset: 4, why: "bad key character"),
        .init(input: "/a/.", offset: 3, why: "'.' is not a name"),
        // `..` anywhere but at the start of a relative path.
        .init(input: "/a/../b", offset: 3, why: ".. in the middle"),
        .init(input: "a/..", offset: 2, why: ".. at the end"),
        .init(input: "^../a", offset: 1, why: ".. after ^"),
        .init(input: "../a/..", offset: 5, why: ".. after a name"),
        .init(input: "..!/..", offset: 2, why: "container mark before .."),
        // Bad percent escape.
        .init(input: "/a(q=%zz)", offset: 5, why: "bad percent escape"),
        .init(input: "/a(q=x%2)", offset: 6, why: "bad percent escape"),
        .init(input: "/a(q=x%)", offset: 6, why: "bad percent escape"),
        .init(input: "/a(q=é%zz)", offset: 6, why: "bad percent escape after a 2-byte character"),
        .init(input: "/a(q=%FF)", offset: 5, why: "escape that is not UTF-8"),
        .init(input: "/a(q=é%C3)", offset: 5, why: "escape that ends a character too early"),
        .init(input: "/a(q=%F0%90%80A)", offset: 5, why: "truncated 4-byte sequence (repair would keep the length)"),
        .init(input: "/a(q=abcdefghijklmnopq%ED%A0%80)", offset: 5, why: "surrogate in a long value"),
        // Raw `(` or a control character in a value.
        .init(input: "/a(q=x(y)", offset: 6, why: "( in a value"),
        .init(input: "/a(q=x\ty)", offset: 6, why: "control character in a value"),
        // Duplicate key.
        .init(input: "/a(k=1,k=2)", offset: 7, why: "duplicate key"),
        .init(input: "/a(k=1,j=2,k=3)", offset: 11, why: "duplicate key"),
        // `up(n=K)`: K is a whole number ≥ 1, and n is its only parameter.
        .init(input: "up(n=0)", offset: 5, why: "up(n=0)"),
        .init(input: "up(n=x)", offset: 5, why: "up(n=x)"),
        .init(input: "up(n=-1)", offset: 5, why: "up(n=-1)"),
        .init(input: "up(n=01)", offset: 5, why: "up(n=01)"),
        .init(input: "up(n=)", offset: 5, why: "up(n=)"),
        .init(input: "up(m=1)", offset: 3, why: "up(m=1)"),
        .init(input: "up(n=1,m=2)", offset: 3, why: "up with two parameters"),
        // Offsets count Unicode scalars, not bytes.
        .init(input: "/a(q=日本)/b c", offset: 10, why: "offset after multi-byte characters")
    ]

    @Test(arguments: invalid)
    func strictError(_ invalid: Invalid) {
        do {
            let parsed = try PathExpression.parse(invalid.input)
            Issue.record("'\(invalid.input)' parsed as \(parsed)")
        } catch {
            #expect(error.offset == invalid.offset, "\(error.reason)")
        }
    }

    /// A blank or another character a name cannot hold, right after a name, is named as that
    /// (not as a missing `/`): the usual mistake is a space in a scene's name.
    @Test func aCharacterThatBreaksANameSaysSo() throws {
        for (input, offset) in [("/top/list news", 9), ("/top news", 4), ("/a(q=日本)/b c", 10), ("/a;b", 2)] {
            let error = #expect(throws: PathError.self) { try PathExpression.parse(input) }
            #expect(error?.offset == offset)
            #expect(error?.reason.hasPrefix("character not allowed in a name") == true, "\(input): \(error?.reason ?? "")")
        }
    }

    @Test func unclosedParenthesisSaysSo() throws {
        for input in ["/top(", "/top(a=1", "/top(a=1,"] {
            #expect(throws: PathError(offset: 4, reason: "unclosed '('")) { try PathExpression.parse(input) }
        }
    }

    @Test(arguments: ["/a/../b", "/a(k=1,k=2)", "//a", "/a(x=1)b"])
    func stagePathsAreAsStrict(_ input: String) throws {
        let expressionError = #expect(throws: PathError.self) { try PathExpression.parse(input) }
        let pathError = #expect(throws: PathError.self) { try Path.parse(input) }
        #expect(expressionError == pathError)
    }

    @Test func errorDescriptionNamesTheOffset() {
        #expect(PathError(offset: 3, reason: "empty name").description == "empty name at offset 3")
    }

    /// Every byte's class, at each boundary of the name-byte test (`A`–`Z`, `a`–`z`, `0`–`9`, `_`,
    /// `.`, `-`; nothing from 128 up).
    @Test func nameBytesAreExactlyTheGrammarsNameCharacters() throws {
        func expected(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        for byte in UInt8(0)...UInt8(127) {
            let character = String(UnicodeScalar(byte))
            #expect(("a" + character + "b").isValidPathName == expected(byte), "byte \(byte)")
            // The parser agrees: `/a<c>` is one component named `a<c>` exactly when `<c>` is a name byte.
            let parsed = try? PathExpression.parse("/a" + character)
            let named = if case .relative(0, let path)? = parsed { path.components.map(\.name) == ["a" + character] } else { false }
            #expect(named == expected(byte), "byte \(byte)")
        }
        // Lead and continuation bytes of UTF-8 (0x80–0xFF) are never name bytes.
        for scalar in ["\u{80}", "\u{BF}", "\u{FF}", "\u{7FF}", "\u{FFFF}", "\u{10FFFF}", "é"] {
            #expect(!("a" + scalar).isValidPathName, "\(scalar)")
            #expect((try? PathExpression.parse("/a" + scalar)) == nil, "\(scalar)")
        }
    }
}
