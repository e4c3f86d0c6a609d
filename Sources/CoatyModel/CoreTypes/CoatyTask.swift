/// A task (`coaty.Task`, core type `Task`). Named `CoatyTask` so it never shadows Swift's `Task`.
open class CoatyTask: CoatyObject, @unchecked Sendable {
    /// `coaty.Task`.
    override open class var objectType: String { CoreType.task.objectType }
    /// ``CoreType/task``.
    override public class var coreType: CoreType { .task }
    /// The task's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The task's state.
    public let status: TaskStatus
    /// The object id of the user or agent that created the task.
    public let creatorID: ObjectID
    /// When the task was created, in milliseconds since the Unix epoch.
    public let creationTimestamp: Double
    /// When the task was last changed, in milliseconds since the epoch.
    public let lastModificationTimestamp: Double?
    /// When the task was started, in milliseconds since the epoch.
    public let startTimestamp: Double?
    /// When the task is due, in milliseconds since the epoch.
    public let dueTimestamp: Double?
    /// When the task was done, in milliseconds since the epoch.
    public let doneTimestamp: Double?
    /// The estimated or actual duration in milliseconds.
    public let duration: Double?
    /// Requirements, as a JSON object.
    public let requirements: [String: AnyCodable]?
    /// A description.
    public let taskDescription: String?
    /// The object id of the assignee.
    public let assigneeObjectID: ObjectID?

    /// Creates a task.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.Task`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: A human-readable name.
    ///   - status: The task's state.
    ///   - creatorID: Who created the task.
    ///   - creationTimestamp: Creation time in milliseconds since the epoch.
    ///   - lastModificationTimestamp: Last change in milliseconds since the epoch.
    ///   - startTimestamp: Start time in milliseconds since the epoch.
    ///   - dueTimestamp: Due time in milliseconds since the epoch.
    ///   - doneTimestamp: Completion time in milliseconds since the epoch.
    ///   - duration: Duration in milliseconds.
    ///   - requirements: Requirements as a JSON object.
    ///   - taskDescription: A description (`description` on the wire).
    ///   - assigneeObjectID: The assignee.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        status: TaskStatus,
        creatorID: ObjectID,
        creationTimestamp: Double,
        lastModificationTimestamp: Double? = nil,
        startTimestamp: Double? = nil,
        dueTimestamp: Double? = nil,
        doneTimestamp: Double? = nil,
        duration: Double? = nil,
        requirements: [String: AnyCodable]? = nil,
        taskDescription: String? = nil,
        assigneeObjectID: ObjectID? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.status = status
        self.creatorID = creatorID
        self.creationTimestamp = creationTimestamp
        self.lastModificationTimestamp = lastModificationTimestamp
        self.startTimestamp = startTimestamp
        self.dueTimestamp = dueTimestamp
        self.doneTimestamp = doneTimestamp
        self.duration = duration
        self.requirements = requirements
        self.taskDescription = taskDescription
        self.assigneeObjectID = assigneeObjectID
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
        case status, creatorID = "creatorId", creationTimestamp, lastModificationTimestamp, startTimestamp
        case dueTimestamp, doneTimestamp, duration, requirements, taskDescription = "description"
        case assigneeObjectID = "assigneeObjectId"
    }

    /// Decodes and validates a task as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `status` missing or not a ``TaskStatus`` number,
    ///   `creatorId` missing or empty, `creationTimestamp` not a number, `startTimestamp`/`duration` not
    ///   numbers, `requirements` not an object, `description` not a string, `assigneeObjectId` empty, any
    ///   optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.status = try container.decode(TaskStatus.self, forKey: .status)
        self.creatorID = try container.decodeNonEmptyID(forKey: .creatorID)
        self.creationTimestamp = try container.decode(Double.self, forKey: .creationTimestamp)
        self.lastModificationTimestamp = try container.decodeStrictIfPresent(
            Double.self,
            forKey: .lastModificationTimestamp
        )
        self.startTimestamp = try container.decodeStrictIfPresent(Double.self, forKey: .startTimestamp)
        self.dueTimestamp = try container.decodeStrictIfPresent(Double.self, forKey: .dueTimestamp)
        self.doneTimestamp = try container.decodeStrictIfPresent(Double.self, forKey: .doneTimestamp)
        self.duration = try container.decodeStrictIfPresent(Double.self, forKey: .duration)
        self.requirements = try container.decodePlainObjectIfPresent(forKey: .requirements)
        self.taskDescription = try container.decodeStrictIfPresent(String.self, forKey: .taskDescription)
        self.assigneeObjectID = try container.decodeNonEmptyIDIfPresent(forKey: .assigneeObjectID)
        try super.init(from: decoder)
    }

    /// Encodes the task; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.creatorID, forKey: .creatorID)
        try container.encodeNumber(self.creationTimestamp, forKey: .creationTimestamp)
        try container.encodeNumberIfPresent(self.lastModificationTimestamp, forKey: .lastModificationTimestamp)
        try container.encodeNumberIfPresent(self.startTimestamp, forKey: .startTimestamp)
        try container.encodeNumberIfPresent(self.dueTimestamp, forKey: .dueTimestamp)
        try container.encodeNumberIfPresent(self.doneTimestamp, forKey: .doneTimestamp)
        try container.encodeNumberIfPresent(self.duration, forKey: .duration)
        try container.encodeIfPresent(self.requirements, forKey: .requirements)
        try container.encodeIfPresent(self.taskDescription, forKey: .taskDescription)
        try container.encodeIfPresent(self.assigneeObjectID, forKey: .assigneeObjectID)
    }
}
