import Testing

@testable import CoatyModel

/// `contains` with large arrays hashes the container's primitives (`PrimitiveElementIndex`) instead of
/// searching it once per operand element; it must answer exactly as the ordered search coaty-js does.
struct ContainsIndexTests {
    /// The ordered search of `util/deep.ts contains` for an array operand, element by element, which
    /// never takes the indexed path (each call tests one operand element).
    private static func orderedSearch(_ elements: [AnyCodable], _ wanted: [AnyCodable]) -> Bool? {
        for item in wanted {
            var isFound = false
            for element in elements {
                guard let result = JavaScriptSemantics.contains(element, item, isTopLevel: false) else { return nil }
                if result {
                    isFound = true
                    break
                }
            }
            if !isFound { return false }
        }
        return true
    }

    /// Values that collide in every way the index must tell apart: integers equal or not as doubles
    /// (2^53 and 2^53 + 1), `0` and `-0.0`, NaN, `1` and `true` and `"1"`, canonically equivalent
    /// strings, `null`, and arrays and objects (which are searched, not hashed).
    private static let pool: [AnyCodable] = [
        .null, .bool(true), .bool(false), .int(0), .double(-0.0), .int(1), .double(1), .string("1"),
        .int(1 << 53), .int((1 << 53) + 1), .double(9_007_199_254_740_992), .double(.nan), .double(0.5),
        .string("caf\u{E9}"), .string("cafe\u{301}"), .string(""), .int(.max), .int(.min),
        .double(9.223372036854776e18), .array([.int(1)]), .array([]), .object(["a": .int(1)]), .object([:]),
    ]

    @Test func answersAsTheOrderedSearch() {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        for _ in 0..<3_000 {
            let elements = (0..<Int.random(in: 16...40, using: &generator)).map { _ in
                Self.pool.randomElement(using: &generator)!
            }
            let wanted = (0..<Int.random(in: 16...24, using: &generator)).map { _ in
                Self.pool.randomElement(using: &generator)!
            }
            // Mostly operands drawn from the container, so that many are fully contained.
            let present = (0..<Int.random(in: 16...24, using: &generator)).map { _ in
                elements.randomElement(using: &generator)!
            }
            for operand in [wanted, present] {
                let expected = Self.orderedSearch(elements, operand)
                let actual = JavaScriptSemantics.contains(.array(elements), .array(operand))
                #expect(actual == expected, "contains(\(elements), \(operand))")
                checked += expected == true ? 1 : 0
            }
        }
        #expect(checked > 100, "too few operands were contained to exercise the found path")
    }

    @Test func nullBeforeAnObjectIsFoundAndAfterItThrows() {
        let padding = (0..<20).map { AnyCodable.int($0) }
        let operand = AnyCodable.array(padding + [.null])
        let nullFirst = AnyCodable.array(padding + [.null, .object([:])])
        let objectFirst = AnyCodable.array(padding + [.object([:]), .null])
        #expect(JavaScriptSemantics.contains(nullFirst, operand) == true)
        #expect(JavaScriptSemantics.contains(objectFirst, operand) == nil)
        #expect(JavaScriptSemantics.contains(.array(padding), operand) == false)
    }

    @Test func aLargeOperandAgainstALargeArrayMatches() {
        // 20,000 × 20,000 would be 4 × 10^8 comparisons in the ordered search.
        let elements = (0..<20_000).map { AnyCodable.string("tag-\($0)") }
        let filter = ContextFilter(.init("tags", .contains(.array(elements.reversed()))))
        #expect(filter.matches(["tags": .array(elements)]))
        #expect(!filter.matches(["tags": .array(Array(elements.dropLast()))]))
    }
}
