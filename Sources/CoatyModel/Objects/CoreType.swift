/// The twelve core types of Coaty 2. Every object names one of them in its `coreType` field.
///
/// The raw value is the wire name (`"Task"`); ``objectType`` is the canonical object type (`"coaty.Task"`).
public enum CoreType: String, Sendable, Hashable, Codable, CaseIterable {
    case coatyObject = "CoatyObject"
    case user = "User"
    case annotation = "Annotation"
    case task = "Task"
    case ioContext = "IoContext"
    case ioNode = "IoNode"
    case ioSource = "IoSource"
    case ioActor = "IoActor"
    case identity = "Identity"
    case log = "Log"
    case location = "Location"
    case snapshot = "Snapshot"

    /// The canonical object type of this core type, `"coaty."` followed by the raw value.
    public var objectType: String { "coaty." + self.rawValue }

    /// The core type whose canonical object type is `objectType`, if any.
    public init?(canonicalObjectType objectType: String) {
        guard objectType.hasPrefix("coaty."), let type = CoreType(rawValue: String(objectType.dropFirst(6))) else {
            return nil
        }
        self = type
    }
}
