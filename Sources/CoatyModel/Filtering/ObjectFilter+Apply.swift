extension ObjectFilter {
    /// Applies the filter to a collection, as a Query responder does: keeps the matching objects, orders
    /// them by ``orderByProperties``, then skips ``skip`` and takes ``take``.
    ///
    /// The semantics are those of coaty-js's in-memory database adapter:
    /// - Ordering compares each property in turn, for ``FilterSortOrder/ascending``: a missing value
    ///   before any present value, `false` before `true`, numbers by their exact values, strings by
    ///   ``FilterCollation``; ``FilterSortOrder/descending`` reverses it. Ties keep the input order.
    ///   Values of different JSON types (where JavaScript's comparison is inconsistent) order by type:
    ///   `null` < booleans < numbers < strings < arrays < objects; two arrays or two objects tie.
    /// - A `nil` or `0` ``take`` means no limit (coaty-js evaluates `take || Number.MAX_SAFE_INTEGER`);
    ///   a negative ``take`` returns nothing.
    /// - The adapter returns the match at index `i` if `0 <= i - skip < take`: a `nil` ``skip`` skips
    ///   nothing, and a negative one returns the first `take + skip` matches (none for `skip: -3,
    ///   take: 2`).
    ///
    /// - Parameter objects: The objects to filter, in their natural order.
    /// - Returns: The selected objects. An object that cannot be encoded to JSON (see
    ///   `CoatyObject.jsonValue`) never matches.
    public func apply<Element: CoatyObject>(to objects: [Element]) -> [Element] {
        self.apply(to: objects) { try? $0.jsonValue }
    }

    /// Applies the filter to JSON values; with the semantics of ``apply(to:jsonValue:)``.
    ///
    /// - Parameter values: The values to filter, in their natural order.
    /// - Returns: The selected values.
    public func apply(to values: [AnyCodable]) -> [AnyCodable] {
        self.apply(to: values) { $0 }
    }

    /// Applies the filter to any elements, evaluating each through its JSON form.
    ///
    /// - Parameters:
    ///   - elements: The elements to filter, in their natural order.
    ///   - jsonValue: Returns the JSON form of an element, or `nil` if the element cannot match.
    /// - Returns: The selected elements.
    public func apply<Element>(to elements: [Element], jsonValue: (Element) -> AnyCodable?) -> [Element] {
        var selected: [(element: Element, value: AnyCodable)] = []
        for element in elements {
            guard let value = jsonValue(element), self.matches(value) else { continue }
            selected.append((element, value))
        }
        if let orderings = self.orderByProperties, !orderings.isEmpty {
            let paths = orderings.map { ($0.property.segments, $0.order) }
            let keyed = selected.enumerated().map { index, item in
                (index: index, item: item, keys: paths.map { JavaScriptSemantics.lookup($0.0, in: item.value) })
            }
            let sorted = keyed.sorted { lhs, rhs in
                for (position, (_, order)) in paths.enumerated() {
                    let result = Self.orderCompare(lhs.keys[position], rhs.keys[position])
                    if result != 0 { return order == .ascending ? result < 0 : result > 0 }
                }
                return lhs.index < rhs.index
            }
            selected = sorted.map(\.item)
        }
        // The adapter yields the match at index i if 0 <= i - skip < limit, with limit = take || MAX.
        let offset = self.skip ?? 0
        let limit = self.take.flatMap { $0 == 0 ? nil : $0 } ?? Int.max
        let (sum, overflow) = offset.addingReportingOverflow(limit)
        let end = overflow ? (limit > 0 ? selected.count : 0) : min(max(sum, 0), selected.count)
        let start = min(max(offset, 0), end)
        return selected[start..<end].map(\.element)
    }

    /// Compares two property values for ordering; `nil` is a missing property.
    static func orderCompare(_ lhs: AnyCodable?, _ rhs: AnyCodable?) -> Int {
        switch (lhs, rhs) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (.string(let a)?, .string(let b)?): return FilterCollation.compare(a, b)
        case (.bool(let a)?, .bool(let b)?): return a == b ? 0 : (a ? 1 : -1)
        case (.int(let x)?, .int(let y)?): return x == y ? 0 : (x < y ? -1 : 1)
        case (.int(let x)?, .double(let y)?): return Self.compare(x, y)
        case (.double(let x)?, .int(let y)?): return -Self.compare(y, x)
        case (.uint(let x)?, .uint(let y)?): return x == y ? 0 : (x < y ? -1 : 1)
        case (.uint?, .int?): return 1  // every `uint` is above Int.max
        case (.int?, .uint?): return -1
        case (.uint(let x)?, .double(let y)?): return Self.compare(x, y)
        case (.double(let x)?, .uint(let y)?): return -Self.compare(y, x)
        case (.double(let x)?, .double(let y)?):
            // NaN (never from JSON, but a program can make one) sorts after every number.
            if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? 0 : (x.isNaN ? 1 : -1) }
            return x == y ? 0 : (x < y ? -1 : 1)
        default: break
        }
        let (a, b) = (Self.typeRank(lhs), Self.typeRank(rhs))
        return a == b ? 0 : (a < b ? -1 : 1)
    }

    /// Compares an unsigned integer above `Int.max` with a double by their exact values (see the
    /// overload for `Int`).
    static func compare(_ integer: UInt64, _ double: Double) -> Int {
        if double.isNaN || double >= 0x1p64 { return -1 }
        if double < 0 { return 1 }
        let floor = UInt64(double.rounded(.down))
        if integer != floor { return integer < floor ? -1 : 1 }
        return double > Double(floor) ? -1 : 0
    }

    /// Compares an integer with a double by their exact values.
    ///
    /// Going through `Double` would round integers beyond 2^53, so 2^53 + 1 would tie with the double
    /// 2^53 while sorting after the integer 2^53: not a strict weak ordering, which `sorted(by:)` needs.
    static func compare(_ integer: Int, _ double: Double) -> Int {
        // Doubles outside [-2^63, 2^63) lie beyond every Int; inside, their floor fits in one exactly.
        // NaN sorts after every number (and `Int(_:)` would trap on it).
        if double.isNaN || double >= 0x1p63 { return -1 }
        if double < -0x1p63 { return 1 }
        let floor = Int(double.rounded(.down))
        if integer != floor { return integer < floor ? -1 : 1 }
        return double > Double(floor) ? -1 : 0
    }

    private static func typeRank(_ value: AnyCodable?) -> Int {
        switch value {
        case nil: -1
        case .null?: 0
        case .bool?: 1
        case .int?, .uint?, .double?: 2
        case .string?: 3
        case .array?: 4
        case .object?: 5
        }
    }
}
