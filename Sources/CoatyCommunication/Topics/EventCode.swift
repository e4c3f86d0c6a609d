/// The event code of a Coaty topic's event level (`ADV`, `DSC`, …), protocol version 3.
public enum EventCode: String, Sendable, Hashable, CaseIterable {
    /// Advertise (one-way, filter: core type or `:`object type).
    case advertise = "ADV"
    /// Deadvertise (one-way).
    case deadvertise = "DAD"
    /// Channel (one-way, filter: channel id).
    case channel = "CHN"
    /// Associate (one-way, filter: IO context name).
    case associate = "ASC"
    /// IO value (one-way; the source level is the IO source id).
    case ioValue = "IOV"
    /// Discover (two-way request).
    case discover = "DSC"
    /// Resolve (two-way response to Discover).
    case resolve = "RSV"
    /// Query (two-way request).
    case query = "QRY"
    /// Retrieve (two-way response to Query).
    case retrieve = "RTV"
    /// Update (two-way request, filter: core type or `:`object type).
    case update = "UPD"
    /// Complete (two-way response to Update).
    case complete = "CPL"
    /// Call (two-way request, filter: operation name).
    case call = "CLL"
    /// Return (two-way response to Call).
    case `return` = "RTN"

    /// Whether events of this code carry a correlation id level.
    public var isTwoWay: Bool {
        switch self {
        case .advertise, .deadvertise, .channel, .associate, .ioValue: false
        case .discover, .resolve, .query, .retrieve, .update, .complete, .call, .return: true
        }
    }

    /// Whether events of this code are responses (Resolve, Retrieve, Complete, Return).
    public var isResponse: Bool {
        switch self {
        case .resolve, .retrieve, .complete, .return: true
        default: false
        }
    }

    /// Whether the event level must carry a filter (`ADV`, `UPD`, `CHN`, `CLL`, `ASC`).
    public var requiresFilter: Bool {
        switch self {
        case .advertise, .update, .channel, .call, .associate: true
        default: false
        }
    }

    /// The code whose raw value is exactly these UTF-8 bytes; `nil` for any other bytes.
    ///
    /// Inbound topics are parsed as bytes; this looks the code up without making a string.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 3, let code = Self.byKey[Self.key(bytes)] else { return nil }
        self = code
    }

    /// Every code by the key of its three raw-value bytes, derived from the raw values.
    private static let byKey: [UInt32: EventCode] = Dictionary(
        uniqueKeysWithValues: allCases.map { code in (Self.key(Array(code.rawValue.utf8)), code) }
    )

    private static func key(_ bytes: some Collection<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
