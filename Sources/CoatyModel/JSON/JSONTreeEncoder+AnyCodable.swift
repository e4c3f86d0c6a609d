/// ``AnyCodable`` values (custom properties, parameters, results) become part of the tree directly,
/// without going through containers.
extension JSONTreeEncoder {
    /// The tree of an ``AnyCodable``; `path` names it in an error (a non-finite number).
    static func tree(of value: AnyCodable, path: @autoclosure () -> [any CodingKey]) throws -> EncodedJSON {
        switch value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .integer(Int64(value))
        case .uint(let value): return .unsigned(value)
        case .double(let value): return try Self.number(value, path: path())
        case .string(let value): return .string(value)
        case .array(let elements):
            let array = EncodedArray()
            array.elements.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                array.elements.append(try Self.tree(of: element, path: path() + [AnyCodingKey(index: index)]))
            }
            return .array(array)
        case .object(let members):
            var keys: [String] = []
            var values: [EncodedJSON] = []
            keys.reserveCapacity(members.count)
            values.reserveCapacity(members.count)
            for (key, member) in members {
                keys.append(key)
                values.append(try Self.tree(of: member, path: path() + [AnyCodingKey(key)]))
            }
            // In key order, not the dictionary's, which differs from process to process.
            Self.sortByKey(&keys, &values)
            return .object(EncodedObject(uniqueKeys: keys, values: values))
        }
    }

    /// Sorts `keys` in ``JSONKeyOrder``, and `values` with them. A few members (the usual case) are
    /// sorted in place; more through an index array.
    private static func sortByKey(_ keys: inout [String], _ values: inout [EncodedJSON]) {
        if keys.count <= JSONKeyOrder.inPlaceLimit {
            keys.withUnsafeMutableBufferPointer { keys in
                values.withUnsafeMutableBufferPointer { values in
                    JSONKeyOrder.insertionSort(count: keys.count, key: { keys[$0] }) {
                        keys.swapAt($0, $1)
                        values.swapAt($0, $1)
                    }
                }
            }
        } else {
            let order = JSONKeyOrder.sortedIndices(of: keys)
            keys = order.map { keys[$0] }
            values = order.map { values[$0] }
        }
    }
}
