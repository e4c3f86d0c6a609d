import CoatyModel

/// The example's custom object type: a greeting job that the service offers and a client takes on.
///
/// Registered in the agents' ``ObjectFamily`` (see `HelloWorldFamily`), so it decodes as this class;
/// an agent without it would still decode it, as a plain `CoatyObject` keeping every field.
final class HelloTask: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.hello.HelloTask" }
    override class var propertyKeys: Set<String> { Set(CodingKeys.allCases.map(\.rawValue)) }

    /// Where a task is in its life.
    enum State: String, Codable, Sendable {
        case open, assigned, done
    }

    /// The task's number in the scene, from 1.
    let number: Int
    /// Who is to be greeted.
    let recipient: String
    let state: State
    /// The client agent the service assigned the task to.
    let assignee: ObjectID?
    /// The greeting, once done.
    let greeting: String?

    init(
        objectID: ObjectID = .random(),
        number: Int,
        recipient: String,
        state: State = .open,
        assignee: ObjectID? = nil,
        greeting: String? = nil,
        parentObjectID: ObjectID? = nil
    ) {
        self.number = number
        self.recipient = recipient
        self.state = state
        self.assignee = assignee
        self.greeting = greeting
        super.init(objectID: objectID, name: "Greet \(recipient)", parentObjectID: parentObjectID)
    }

    /// A copy in another state.
    func with(state: State, assignee: ObjectID? = nil, greeting: String? = nil) -> HelloTask {
        HelloTask(
            objectID: self.objectID,
            number: self.number,
            recipient: self.recipient,
            state: state,
            assignee: assignee ?? self.assignee,
            greeting: greeting ?? self.greeting,
            parentObjectID: self.parentObjectID
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case number, recipient, state, assignee, greeting
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.number = try container.decode(Int.self, forKey: .number)
        self.recipient = try container.decode(String.self, forKey: .recipient)
        self.state = try container.decode(State.self, forKey: .state)
        self.assignee = try container.decodeIfPresent(ObjectID.self, forKey: .assignee)
        self.greeting = try container.decodeIfPresent(String.self, forKey: .greeting)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.number, forKey: .number)
        try container.encode(self.recipient, forKey: .recipient)
        try container.encode(self.state, forKey: .state)
        try container.encodeIfPresent(self.assignee, forKey: .assignee)
        try container.encodeIfPresent(self.greeting, forKey: .greeting)
    }
}

/// The names the scene's agents share.
enum HelloWorld {
    /// Every agent of the scene registers the custom type once, at bootstrap.
    static let family: ObjectFamily = [HelloTask.self]
    /// The object type of the service's discoverable descriptor.
    static let serviceType = "com.example.hello.Service"
    /// The remote operation the service offers.
    static let greetOperation = "com.example.hello.greet"
    /// The channel on which clients report finished tasks.
    static let progressChannel = "com.example.hello.progress"
    /// Who gets greeted, in order.
    static let recipients = ["Ada", "Grace", "Alan", "Barbara", "Edsger", "Margaret", "Dennis", "Frances"]
}
