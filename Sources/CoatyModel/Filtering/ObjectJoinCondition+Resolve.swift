extension ObjectJoinCondition {
    /// Attaches the objects related to `value` under ``asProperty``, as coaty-js's in-memory database
    /// adapter resolves a join condition.
    ///
    /// For the value of ``localProperty`` (a top-level key, not a path, found code point for code point as
    /// every filter property is), or for each of its elements if
    /// ``isLocalPropertyArray`` is `true`, the related objects whose `relatedProperty` strictly equals it
    /// are collected in order (only the first one per local value if ``isOneToOneRelation`` is `true`).
    /// With ``isOneToOneRelation`` and without ``isLocalPropertyArray`` the first related object is
    /// attached as a single value, and ``asProperty`` is removed if there is none; otherwise an array
    /// (possibly empty) is attached. An existing ``asProperty`` is replaced.
    ///
    /// - Parameters:
    ///   - value: The result object to augment. Values that are not objects are returned unchanged.
    ///   - related: The candidate related objects, in their natural order.
    ///   - relatedProperty: The top-level property of a related object that must equal the local value,
    ///     e.g. `"objectId"`.
    /// - Returns: `value` with ``asProperty`` set or removed. A local value that is missing, or not an
    ///   array when ``isLocalPropertyArray`` is `true`, relates no objects.
    public func resolve(in value: AnyCodable, related: [AnyCodable], relatedProperty: String) -> AnyCodable {
        guard case .object(var members) = value else { return value }
        let localValues: [AnyCodable]
        switch (self.isLocalPropertyArray ?? false, JavaScriptSemantics.member(self.localProperty, of: members)) {
        case (_, nil): localValues = []
        case (true, .array(let elements)?): localValues = elements
        case (true, _): localValues = []
        case (false, let single?): localValues = [single]
        }
        let isOneToOne = self.isOneToOneRelation ?? false
        var joined: [AnyCodable] = []
        for localValue in localValues {
            for candidate in related
            where JavaScriptSemantics.strictEquals(Self.value(of: relatedProperty, in: candidate), localValue) {
                joined.append(candidate)
                if isOneToOne { break }
            }
        }
        if isOneToOne && !(self.isLocalPropertyArray ?? false) {
            members[self.asProperty] = joined.first
        } else {
            members[self.asProperty] = .array(joined)
        }
        return .object(members)
    }

    /// The property named exactly `key` (code point for code point, as JavaScript finds it) of an object.
    private static func value(of key: String, in object: AnyCodable) -> AnyCodable? {
        guard case .object(let members) = object else { return nil }
        return JavaScriptSemantics.member(key, of: members)
    }
}
