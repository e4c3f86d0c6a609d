/// A log entry (`coaty.Log`) published by an agent, for example with a controller's `logInfo`.
open class Log: CoatyObject, @unchecked Sendable {
    /// `coaty.Log`.
    override open class var objectType: String { CoreType.log.objectType }
    /// ``CoreType/log``.
    override public class var coreType: CoreType { .log }
    /// The log's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The severity.
    public let logLevel: LogLevel
    /// The message.
    public let logMessage: String
    /// When it was logged: an ISO 8601 string with a time-zone offset (`Z` for UTC), kept verbatim.
    public let logDate: String
    /// Tags (non-empty strings) to categorise the entry.
    public let logTags: [String]?
    /// Labels, as a JSON object.
    public let logLabels: [String: AnyCodable]?
    /// Information about the host that logged the entry.
    public let logHost: LogHost?

    /// Information about the host and agent that logged an entry.
    public struct LogHost: Sendable, Hashable, Codable {
        /// The agent's package, build and configuration info.
        public var agentInfo: AgentInfo?
        /// The process id.
        public var pid: Int?
        /// The host name.
        public var hostname: String?
        /// The user agent, for browser agents.
        public var userAgent: String?

        /// Creates host information.
        public init(agentInfo: AgentInfo? = nil, pid: Int? = nil, hostname: String? = nil, userAgent: String? = nil) {
            self.agentInfo = agentInfo
            self.pid = pid
            self.hostname = hostname
            self.userAgent = userAgent
        }

        private enum CodingKeys: String, CodingKey {
            case agentInfo, pid, hostname, userAgent
        }

        /// Decodes host information.
        ///
        /// - Throws: `DecodingError` naming a field that is `null` or of the wrong type.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.agentInfo = try container.decodeStrictIfPresent(AgentInfo.self, forKey: .agentInfo)
            self.pid = try container.decodeStrictIfPresent(Int.self, forKey: .pid)
            self.hostname = try container.decodeStrictIfPresent(String.self, forKey: .hostname)
            self.userAgent = try container.decodeStrictIfPresent(String.self, forKey: .userAgent)
        }
    }

    /// Package, build and configuration information of an agent. Each part is a JSON object with required
    /// string fields (`packageInfo.name`/`version`, `buildInfo.buildDate`/`buildMode`,
    /// `configInfo.serviceHost`) and any extra fields, kept verbatim.
    public struct AgentInfo: Sendable, Hashable, Codable {
        /// `name`, `version` and extra fields.
        public var packageInfo: [String: AnyCodable]
        /// `buildDate`, `buildMode` and extra fields.
        public var buildInfo: [String: AnyCodable]
        /// `serviceHost` and extra fields.
        public var configInfo: [String: AnyCodable]

        /// Creates agent information.
        public init(
            packageInfo: [String: AnyCodable],
            buildInfo: [String: AnyCodable],
            configInfo: [String: AnyCodable]
        ) {
            self.packageInfo = packageInfo
            self.buildInfo = buildInfo
            self.configInfo = configInfo
        }

        private enum CodingKeys: String, CodingKey {
            case packageInfo, buildInfo, configInfo
        }

        /// Decodes agent information.
        ///
        /// - Throws: `DecodingError` naming a part that is missing or lacks one of its string fields.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func part(_ key: CodingKeys, requiring fields: [String]) throws -> [String: AnyCodable] {
                let value = try container.decode([String: AnyCodable].self, forKey: key)
                for field in fields where value[field]?.stringValue == nil {
                    throw container.invalid(key, "must have a string '\(field)'")
                }
                return value
            }
            self.packageInfo = try part(.packageInfo, requiring: ["name", "version"])
            self.buildInfo = try part(.buildInfo, requiring: ["buildDate", "buildMode"])
            self.configInfo = try part(.configInfo, requiring: ["serviceHost"])
        }
    }

    /// Creates a log entry.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.Log`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name (coaty-js uses the controller's name).
    ///   - logLevel: The severity.
    ///   - logMessage: The message.
    ///   - logDate: An ISO 8601 date with offset.
    ///   - logTags: Tags.
    ///   - logLabels: Labels.
    ///   - logHost: Host information.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        logLevel: LogLevel,
        logMessage: String,
        logDate: String,
        logTags: [String]? = nil,
        logLabels: [String: AnyCodable]? = nil,
        logHost: LogHost? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.logLevel = logLevel
        self.logMessage = logMessage
        self.logDate = logDate
        self.logTags = logTags
        self.logLabels = logLabels
        self.logHost = logHost
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case logLevel, logMessage, logDate, logTags, logLabels, logHost
    }

    /// Decodes and validates a log entry as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `logLevel` not one of 10, 20, 30, 40, 50,
    ///   `logMessage`/`logDate` not strings, `logTags` with an empty tag, `logLabels` not an object, a
    ///   malformed `logHost`, an optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.logLevel = try container.decode(LogLevel.self, forKey: .logLevel)
        self.logMessage = try container.decode(String.self, forKey: .logMessage)
        self.logDate = try container.decode(String.self, forKey: .logDate)
        self.logTags = try container.decodeStringArrayIfPresent(forKey: .logTags)
        self.logLabels = try container.decodePlainObjectIfPresent(forKey: .logLabels)
        self.logHost = try container.decodeStrictIfPresent(LogHost.self, forKey: .logHost)
        try super.init(from: decoder)
    }

    /// Encodes the log entry; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.logLevel, forKey: .logLevel)
        try container.encode(self.logMessage, forKey: .logMessage)
        try container.encode(self.logDate, forKey: .logDate)
        try container.encodeIfPresent(self.logTags, forKey: .logTags)
        try container.encodeIfPresent(self.logLabels, forKey: .logLabels)
        try container.encodeIfPresent(self.logHost, forKey: .logHost)
    }
}
