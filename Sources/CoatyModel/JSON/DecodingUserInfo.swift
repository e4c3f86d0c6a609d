/// The user info of one decode, shared by its ``JSONValueDecoder`` and every decoder and container
/// nested in it.
///
/// ``CoatyJSONDecoder`` used to build a `[CodingUserInfoKey: Any]` for every decode: a dictionary
/// holding the app's entries, the family and the options, with the options boxed and a new identity
/// scope made for them. That was about 0.4 µs, a third of decoding a small payload such as a Call's
/// or a Return's, and such a payload never reads any of it (Docs/Benchmarks.md). Now a decode makes this
/// one object. ``ObjectFamily/current(in:)`` and ``ObjectDecodingOptions/current(in:)`` read the
/// family and the options through it, and the identity scope and the dictionary that
/// `Decoder.userInfo` hands out are made the first time something asks for them.
///
/// One decode runs on one thread, so the lazy state needs no lock; like the decoders that hold it,
/// this type is not `Sendable`.
final class DecodingUserInfo {
    /// The entries given by the caller: the app's own, or (without `unscopedOptions`) already holding
    /// the family and the options.
    private let entries: [CodingUserInfoKey: any Sendable]
    /// The family objects decode through, if the user info holds one: the one given, or the one in
    /// the entries.
    let family: ObjectFamily?
    /// The options before this decode's identity scope is added.
    private let unscopedOptions: ObjectDecodingOptions?
    private var scopedOptions: ObjectDecodingOptions?
    private var dictionary: [CodingUserInfoKey: Any]?

    /// User info holding exactly `entries`.
    init(_ entries: [CodingUserInfoKey: any Sendable]) {
        self.entries = entries
        self.family = entries[.objectFamily] as? ObjectFamily
        self.unscopedOptions = nil
    }

    /// User info for one ``CoatyJSONDecoder`` decode: `entries`, plus `family` and `options` with a
    /// fresh identity scope, which take precedence over entries under the same keys.
    init(_ entries: [CodingUserInfoKey: any Sendable], family: ObjectFamily, options: ObjectDecodingOptions) {
        self.entries = entries
        self.family = family
        self.unscopedOptions = options
    }

    /// The family's value entry (a factory, a ``DecoderUpdatable`` type) for `type`, if it has one.
    /// Every value that is not a standard type asks, so the family is read in place, not copied.
    func valueEntry(for type: Any.Type) -> ObjectFamily.ValueEntry? {
        guard let family = self.family, !family.valueEntries.isEmpty else { return nil }
        return family.valueEntries[ObjectIdentifier(type)]
    }

    /// The options of this decode, if the user info holds them; the same value, with the same identity
    /// scope, every time.
    var options: ObjectDecodingOptions? {
        if let scopedOptions { return scopedOptions }
        guard let unscopedOptions else { return self.entries[.objectDecodingOptions] as? ObjectDecodingOptions }
        let options = unscopedOptions.withFreshScope()
        self.scopedOptions = options
        return options
    }

    /// Everything, as `Decoder.userInfo` hands it out.
    var values: [CodingUserInfoKey: Any] {
        if let dictionary { return dictionary }
        var values = [CodingUserInfoKey: Any](minimumCapacity: self.entries.count + 2)
        for (key, value) in self.entries { values[key] = value }
        if let family { values[.objectFamily] = family }
        if self.unscopedOptions != nil { values[.objectDecodingOptions] = self.options }
        self.dictionary = values
        return values
    }
}
