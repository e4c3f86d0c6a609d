/// The primitive elements of a JSON array, hashed, so that `contains` with a large array operand costs
/// the sizes of the two arrays added, not multiplied.
///
/// coaty-js (`util/deep.ts contains`) searches the array once for every element of the operand. A
/// Query or Call from another agent whose `Contains` operand has 100,000 elements, tested against an
/// array of 100,000, would cost 10^10 comparisons that way: minutes of one responder's time. With this
/// index, an operand element that is a primitive is looked up in constant time; one that is an array
/// or an object is still searched for, in order, as before.
///
/// Lookups answer exactly as the ordered search does (``JavaScriptSemantics/strictEquals(_:_:)``,
/// including that an integer and a double are equal by the double's value, while two integers are
/// compared exactly); ``JavaScriptSemantics/contains(_:_:isTopLevel:)`` decides when the index pays.
struct PrimitiveElementIndex {
    /// A string compared and hashed code point for code point, as JavaScript compares strings.
    private struct ExactString: Hashable {
        var value: String

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.value.utf8.elementsEqual(rhs.value.utf8) }

        func hash(into hasher: inout Hasher) {
            var value = self.value
            value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    private enum Key: Hashable {
        case bool(Bool)
        /// An integer element, for exact comparison with an integer.
        case int(Int)
        /// An integer element by its double value, for comparison with a double.
        case intAsDouble(Double)
        /// A double element (a NaN is never found: `NaN !== NaN`).
        case double(Double)
        case string(ExactString)
    }

    private var keys: Set<Key> = []
    /// The index of the first `null` element, and of the first object element.
    private var firstNull: Int?
    private var firstObject: Int?

    init(_ elements: [AnyCodable]) {
        self.keys.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            switch element {
            case .null:
                if self.firstNull == nil { self.firstNull = index }
            case .bool(let value):
                self.keys.insert(.bool(value))
            case .int(let value):
                self.keys.insert(.int(value))
                self.keys.insert(.intAsDouble(Double(value)))
            case .uint(let value):
                // JavaScript holds it as the nearest double.
                self.keys.insert(.double(Double(value)))
            case .double(let value):
                self.keys.insert(.double(value))
            case .string(let value):
                self.keys.insert(.string(ExactString(value: value)))
            case .object:
                if self.firstObject == nil { self.firstObject = index }
            case .array:
                break
            }
        }
    }

    /// What searching the elements in order for `value` would answer, where `value` is a primitive.
    enum Answer {
        case found
        case notFound
        /// coaty-js throws: the search meets an object before a `null` it looks for.
        case throwsInCoatyJS
        /// `value` is an array or an object: search for it.
        case needsSearch
    }

    /// What the ordered search of ``JavaScriptSemantics/contains(_:_:isTopLevel:)`` answers for one
    /// element of the operand, `value`. For a primitive other than `null`, array and object elements
    /// never match; a `null` is found if a `null` element comes before any object element, and an
    /// object element before it makes coaty-js throw (`Object.keys(null)`).
    func answer(for value: AnyCodable) -> Answer {
        let isFound: Bool
        switch value {
        case .null:
            switch (self.firstNull, self.firstObject) {
            case (let null?, let object?): return null < object ? .found : .throwsInCoatyJS
            case (_?, nil): return .found
            case (nil, _?): return .throwsInCoatyJS
            case (nil, nil): return .notFound
            }
        case .bool(let value): isFound = self.keys.contains(.bool(value))
        case .int(let value): isFound = self.keys.contains(.int(value)) || self.keys.contains(.double(Double(value)))
        case .double(let value): isFound = self.keys.contains(.double(value)) || self.keys.contains(.intAsDouble(value))
        case .uint(let value):
            isFound = self.keys.contains(.double(Double(value))) || self.keys.contains(.intAsDouble(Double(value)))
        case .string(let value): isFound = self.keys.contains(.string(ExactString(value: value)))
        case .array, .object: return .needsSearch
        }
        return isFound ? .found : .notFound
    }
}
