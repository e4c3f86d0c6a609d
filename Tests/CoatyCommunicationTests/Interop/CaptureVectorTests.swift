import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

@testable import CoatyCommunication

/// Every message captured from coaty-js 2.4.1 agents is consumed as the right event, and our agents
/// produce it again with the same topic and the same parsed payload.
@Suite(.timeLimit(.minutes(1)))
struct CaptureVectorTests {
    static let family = ObjectFamily()

    @Test func theCaptureIsThere() {
        #expect(CaptureVectors.coatyMessages.count == 50)
        #expect(CaptureVectors.otherMessages.count == 4)
        #expect(CaptureVectors.connects.count == 3)
    }

    // MARK: Consuming

    @Test(arguments: CaptureVectors.coatyMessages)
    func consumedAsTheRightEvent(_ captured: CapturedMessage) throws {
        let topic = try #require(CoatyTopic(parsing: captured.topic))
        #expect(topic.namespace == "golden")
        #expect(topic.sourceID == captured.sourceID)
        #expect(topic.correlationID == captured.correlationID)
        if topic.code == .ioValue {
            // IO values carry no event wrapper: JSON text or raw bytes, delivered as they are.
            #expect(captured.isJSON == ((try? AnyCodable(json: captured.payload)) != nil))
            return
        }
        let event = try InboundEvent.decode(
            TransportMessage(topic: captured.topic, payload: captured.payload),
            topic: topic,
            family: Self.family
        )
        let json = try AnyCodable(json: captured.payload)
        switch (topic.code, event) {
        case (.advertise, .advertise(let advertise)):
            try Self.expectObject(advertise.object, matches: json["object"])
        case (.deadvertise, .deadvertise(let deadvertise)):
            #expect(deadvertise.objectIDs.map(\.rawValue) == json["objectIds"]?.arrayValue?.compactMap(\.stringValue))
        case (.channel, .channel(let channel)):
            #expect(channel.channelID == topic.filter)
            #expect((channel.object != nil) == (json["object"] != nil))
        case (.discover, .discover): break
        case (.resolve, .resolve(let resolve)):
            if let object = resolve.object { try Self.expectObject(object, matches: json["object"]) }
            #expect(resolve.relatedObjects?.count == json["relatedObjects"]?.arrayValue?.count)
        case (.query, .query(let query)):
            #expect(query.objectTypes == ["com.example.Thing"])
            #expect(query.objectJoinConditions?.conditions.count == 2)
        case (.retrieve, .retrieve(let retrieve)):
            #expect(retrieve.objects.count == json["objects"]?.arrayValue?.count)
        case (.update, .update(let update)):
            try Self.expectObject(update.object, matches: json["object"])
        case (.complete, .complete(let complete)):
            try Self.expectObject(complete.object, matches: json["object"])
        case (.call, .call(let call)):
            #expect("CLL:" + call.operation == topic.eventLevel)
            #expect(call.parameters == json["parameters"])
        case (.return, .return(let returned)):
            #expect(returned.result == json["result"])
            #expect(returned.error?.code == json["error"]?["code"]?.intValue)
        case (.associate, .associate(let associate)):
            #expect(associate.ioSourceID.rawValue == json["ioSourceId"]?.stringValue)
        default:
            Issue.record("\(captured) decoded as \(event)")
        }
    }

    /// The decoded object has the class of its type and re-encodes to the captured JSON.
    static func expectObject(_ object: CoatyObject, matches json: AnyCodable?) throws {
        let json = try #require(json)
        #expect(try object.jsonValue == json)
        let expectedClass: CoatyObject.Type =
            switch object.objectType {
            case "coaty.Identity": Identity.self
            case "coaty.IoNode": IONode.self
            case "coaty.IoContext": IOContext.self
            case "coaty.Task": CoatyTask.self
            case "coaty.Log": Log.self
            default: CoatyObject.self
            }
        #expect(type(of: object) == expectedClass, "\(object.objectType) decoded as \(type(of: object))")
    }

    // MARK: Producing

    @Test(arguments: CaptureVectors.coatyMessages)
    func reproducedWithTheSameTopicAndPayload(_ captured: CapturedMessage) async throws {
        let topic = try #require(CoatyTopic(parsing: captured.topic))
        let sourceID = topic.sourceID
        let produced = try await Self.produce(captured, topic: topic, sourceID: sourceID)
        #expect(produced.topic == captured.topic)
        if captured.isJSON {
            #expect(
                try AnyCodable(json: produced.payload) == AnyCodable(json: captured.payload),
                "\(String(decoding: produced.payload, as: UTF8.self))"
            )
        } else {
            #expect(produced.payload == captured.payload)
        }
    }

    @Test(arguments: CaptureVectors.otherMessages)
    func rawMessagesAreReproduced(_ captured: CapturedMessage) async throws {
        let produced = try await Self.produce(on: captured.topic, as: ObjectID.random()) { manager, _ in
            try await manager.publish(
                try RawEvent(topic: captured.topic, payload: captured.payload, retain: captured.retain)
            )
        }
        #expect(produced.payload == captured.payload)
        #expect(produced.retain == captured.retain)
    }

    @Test(arguments: CaptureVectors.connects)
    func connectsWithCoatysClientIDAndLastWill(_ captured: CapturedConnect) async throws {
        let manager = CommunicationManager(
            transport: InProcessTransport(bus: InProcessBus()),
            configuration: .init(identity: Identity(objectID: captured.agentID, name: "agent"), namespace: "golden")
        )
        #expect(manager.clientID == captured.clientID)
        let will = manager.unjoinMessage()
        #expect(will.topic == captured.willTopic)
        if let payload = captured.willPayload {
            #expect(try AnyCodable(json: will.payload) == AnyCodable(json: payload))
        }
        #expect(will.qos == .atMostOnce && !will.retain)
    }

    /// Runs an agent with identity `sourceID` in namespace `golden`, performs `action`, and returns the
    /// first message it puts on the bus on `topic`.
    static func produce(
        on topic: String,
        as sourceID: ObjectID,
        identity: Identity? = nil,
        _ action: @escaping @Sendable (CommunicationManager, InProcessBus) async throws -> Void
    ) async throws -> TransportMessage {
        let bus = InProcessBus()
        let wire = bus.messages()
        let identity = identity ?? Identity(objectID: sourceID, name: "agent")
        return try await withOnlineManagers(
            count: 1,
            bus: bus,
            configure: { _, configuration in
                configuration.identity = identity
                configuration.namespace = "golden"
            }
        ) { managers, bus in
            // The action (for responders: an answering loop) runs until the message is on the bus.
            try await withThrowingTaskGroup(of: TransportMessage?.self) { group in
                group.addTask {
                    try await action(managers[0], bus)
                    return nil
                }
                group.addTask {
                    for await message in wire where message.topic == topic { return message }
                    throw TestFailure("nothing was published on \(topic)")
                }
                while let result = try await group.next() {
                    if let result {
                        group.cancelAll()
                        return result
                    }
                }
                throw TestFailure("nothing was published on \(topic)")
            }
        }
    }

    static func produce(_ captured: CapturedMessage, topic: CoatyTopic, sourceID: ObjectID) async throws
        -> TransportMessage
    {
        let message = TransportMessage(topic: captured.topic, payload: captured.payload)
        func decoded() throws -> InboundEvent { try InboundEvent.decode(message, topic: topic, family: Self.family) }
        switch try (topic.code == .ioValue ? nil : decoded()) {
        case nil:
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                try await manager.publish(try IOValueEvent(route: captured.topic, bytes: captured.payload))
            }
        case .advertise(let event):
            // The identity's join Advertise is published by the agent itself, from its configured identity.
            let identity = event.object as? Identity
            return try await self.produce(on: captured.topic, as: sourceID, identity: identity) { manager, _ in
                if identity == nil { try await manager.publish(event) }
            }
        case .deadvertise(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                try await manager.publish(event)
            }
        case .channel(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                try await manager.publish(event)
            }
        case .associate(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                try await manager.publish(event)
            }
        case .discover(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                _ = try await manager.discover(event, correlationID: try #require(topic.correlationID))
            }
        case .query(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                _ = try await manager.query(event, correlationID: try #require(topic.correlationID))
            }
        case .update(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                let correlation = try #require(topic.correlationID)
                _ = try await manager.update(event, correlationID: correlation, objectTypeCorrelationID: correlation)
            }
        case .call(let event):
            return try await self.produce(on: captured.topic, as: sourceID) { manager, _ in
                _ = try await manager.call(event, correlationID: try #require(topic.correlationID))
            }
        case .resolve(let response):
            return try await self.respond(to: captured, as: sourceID, identity: response.object as? Identity) {
                manager in
                let requests = await manager.observeDiscover()
                return { for await request in requests { try request.resolve(response) } }
            }
        case .retrieve(let response):
            return try await self.respond(to: captured, as: sourceID) { manager in
                let requests = await manager.observeQuery()
                return { for await request in requests { try request.retrieve(response) } }
            }
        case .complete(let response):
            return try await self.respond(to: captured, as: sourceID) { manager in
                let requests = try await manager.observeUpdate(objectType: response.object.objectType)
                return { for await request in requests { try request.complete(response) } }
            }
        case .return(let response):
            let request = try #require(CaptureVectors.request(answeredBy: captured))
            let operation = try #require(CoatyTopic(parsing: request.topic)?.filter)
            return try await self.respond(to: captured, as: sourceID) { manager in
                let requests = try await manager.observeCall(operation)
                return { for await request in requests { try request.respond(response) } }
            }
        }
    }

    /// Runs a responder with identity `sourceID`, injects the captured request this response answers,
    /// lets `respond` answer it, and returns the response put on the bus.
    static func respond(
        to captured: CapturedMessage,
        as sourceID: ObjectID,
        identity: Identity? = nil,
        _ observe: @escaping @Sendable (CommunicationManager) async throws -> @Sendable () async throws -> Void
    ) async throws -> TransportMessage {
        let request = try #require(CaptureVectors.request(answeredBy: captured), "no request for \(captured)")
        // An identity answers Discovers for itself automatically; anything else needs the responder.
        let isAutomatic = identity?.objectID == sourceID
        return try await self.produce(on: captured.topic, as: sourceID, identity: isAutomatic ? identity : nil) {
            manager,
            bus in
            let answer = isAutomatic ? nil : try await observe(manager)
            try await InProcessTransport(bus: bus).withConnection(.init(clientID: "injector"), onMessage: { _ in }) {
                try await $0.publish(TransportMessage(topic: request.topic, payload: request.payload))
            }
            // Answers until the response is on the bus (the caller then cancels this).
            try await answer?()
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
