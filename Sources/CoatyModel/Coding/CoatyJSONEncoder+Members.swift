extension CoatyJSONEncoder {
    /// Encodes a JSON object of `members` (distinct keys), in their order, leaving out those that are
    /// `nil`.
    ///
    /// The text is what ``encode(_:)`` writes for a value whose `encode(to:)` puts each member into a
    /// keyed container with `encodeIfPresent`, in that order; this builds it without the `Encoder`
    /// and its containers, which took most of the time of encoding a small event payload such as a
    /// Call's or a Return's (see Docs/Benchmarks.md).
    ///
    /// - Throws: `EncodingError` if a value cannot be encoded (a non-finite number).
    package func encodeMembers(_ members: KeyValuePairs<String, AnyCodable?>) throws -> [UInt8] {
        var keys: [String] = []
        var values: [EncodedJSON] = []
        keys.reserveCapacity(members.count)
        values.reserveCapacity(members.count)
        for (key, value) in members {
            guard let value else { continue }
            keys.append(key)
            values.append(try JSONTreeEncoder.tree(of: value, path: [AnyCodingKey(key)]))
        }
        return JSONWriter.write(
            .object(EncodedObject(uniqueKeys: keys, values: values)),
            sortedKeys: self.outputFormatting.contains(.sortedKeys)
        )
    }
}
