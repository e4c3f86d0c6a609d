import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

/// Runs `responder` on each event of `stream` in a child task while `body` runs.
func whileResponding<Event: Sendable, Result: Sendable>(
    to stream: EventStream<Event>,
    _ responder: @escaping @Sendable (Event) throws -> Void,
    _ body: () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in stream { try responder(event) }
        }
        defer { group.cancelAll() }
        return try await body()
    }
}

func thing(_ name: String = "Thing42", floor: Int = 7, objectID: ObjectID = .random()) -> CoatyObject {
    CoatyObject(
        objectType: "com.example.Thing",
        objectID: objectID,
        name: name,
        externalID: "ext-42",
        customProperties: ["floor": .int(floor)]
    )
}

@Suite(.timeLimit(.minutes(1)))
struct QueryRetrieveTests {
    @Test func queryIsAnsweredWithFilteredObjects() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let store = [thing("Thing1", floor: 5), thing("Thing2", floor: 7), thing("Other", floor: 7)]
            let queries = await managers[1].observeQuery()
            let filter = ObjectFilter(
                conditions: .and([
                    FilterCondition("floor", .between(6, 8)), FilterCondition("name", .like("Thing%")),
                ])
            )
            let retrieve = try await whileResponding(
                to: queries,
                { query in
                    try query.retrieve(
                        RetrieveEvent(objects: query.objectFilter.apply(to: store), privateData: ["total": 1])
                    )
                }
            ) {
                try await managers[0].query(.byObjectTypes(["com.example.Thing"], filter: filter)).first(
                    timeout: .seconds(5)
                )
            }
            #expect(retrieve.objects.map(\.name) == ["Thing2"])
            #expect(retrieve.privateData?["total"] == 1)
        }
    }

    @Test func retrieveOfWrongTypeIsDroppedAndReported() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let queries = await managers[1].observeQuery()
            let diagnostics = managers[0].observeDiagnostics()
            let correlationID = ObjectID.random()
            let responses = try await managers[0].query(.byCoreTypes([.task]), correlationID: correlationID)
            let query = try await queries.first(timeout: .seconds(5))
            // The responder-side check refuses it at the call.
            #expect { try query.retrieve(RetrieveEvent(objects: [CoatyObject(name: "x")])) } throws: {
                ($0 as? CommunicationError)?.code == .invalidResponse
            }
            // A misbehaving agent sends it anyway: the requester drops and reports it.
            let topic = "coaty/3/-/RTV/rogue/\(correlationID)"
            try await publishRaw(
                on: bus,
                [
                    (topic, #"{"objects":[{"objectId":"o1","coreType":"CoatyObject","objectType":"x","name":"x"}]}"#),
                    (topic, #"{"objects":[]}"#),
                ]
            )
            let reported = try #require(await diagnostics.first { $0.kind == .rejectedResponse })
            #expect(reported.topic == topic)
            #expect(try await responses.first(timeout: .seconds(5)).objects.isEmpty)
        }
    }

    @Test func queryWithoutTypesIsRejected() {
        #expect { try QueryEvent.byObjectTypes([""]) } throws: { ($0 as? CommunicationError)?.code == .invalidArgument }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct UpdateCompleteTests {
    @Test func updateOfCustomObjectIsPublishedTwiceAndCompleted() async throws {
        try await withOnlineManagers(count: 2) { managers, bus in
            let taps = bus.messages()
            let original = thing()
            let updates = try await managers[1].observeUpdate(objectType: "com.example.Thing")
            let complete = try await whileResponding(
                to: updates,
                { update in
                    let updated = CoatyObject(
                        objectType: update.object.objectType,
                        objectID: update.object.objectID,
                        name: "Thing42-updated"
                    )
                    try update.complete(CompleteEvent(updated, privateData: ["accepted": true]))
                }
            ) {
                try await managers[0].update(UpdateEvent(original)).first(timeout: .seconds(5))
            }
            #expect(complete.object.name == "Thing42-updated")
            #expect(complete.privateData?["accepted"] == true)
            var updateTopics: [String] = []
            for await message in taps where message.topic.contains("/UPD") {
                updateTopics.append(message.topic)
                if updateTopics.count == 2 { break }
            }
            #expect(updateTopics[0].contains("/UPD::com.example.Thing/"))
            #expect(updateTopics[1].contains("/UPD:CoatyObject/"))
            #expect(updateTopics[0].split(separator: "/").last != updateTopics[1].split(separator: "/").last)
        }
    }

    @Test func completeForAnotherObjectIsRefusedByTheResponder() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let updates = await managers[1].observeUpdate(coreType: .coatyObject)
            _ = try await managers[0].update(UpdateEvent(thing()))
            let update = try await updates.first(timeout: .seconds(5))
            #expect { try update.complete(CompleteEvent(thing())) } throws: {
                ($0 as? CommunicationError)?.code == .invalidResponse
            }
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct CallReturnTests {
    static let operation = "com.example.lights.switchLight"

    /// coaty-js's Call-Return matrix: context floor 7 (between 6 and 8), a context-free callee.
    @Test(arguments: [
        (ContextFilter?.some(ContextFilter(FilterCondition("floor", .between(6, 8)))), true),
        (ContextFilter?.some(ContextFilter(FilterCondition("floor", .equals(10)))), false),
        (ContextFilter?.none, false),
    ])
    func contextFilterSelectsCallees(filter: ContextFilter?, contextCalleeAnswers: Bool) async throws {
        try await withOnlineManagers(count: 3) { managers, _ in
            let context = CoatyObject(objectType: "com.example.Room", name: "Room", customProperties: ["floor": 7])
            let contextCalls = try await managers[1].observeCall(Self.operation, context: context)
            let freeCalls = try await managers[2].observeCall(Self.operation)
            let call = try CallEvent(operation: Self.operation, parameters: ["state": "on"], filter: filter)
            let returns = try await whileResponding(to: contextCalls, { try $0.returnResult("context") }) {
                try await whileResponding(to: freeCalls, { try $0.returnResult("free") }) {
                    let stream = try await managers[0].call(call)
                    var results: [AnyCodable] = []
                    for await returnEvent in stream {
                        results.append(returnEvent.result ?? nil)
                        // The context-free callee always answers; wait for the second answer when expected.
                        if results.count == (contextCalleeAnswers ? 2 : 1) { break }
                    }
                    return results
                }
            }
            #expect(returns.contains("free"))
            #expect(returns.contains("context") == contextCalleeAnswers)
        }
    }

    @Test func returnCarriesErrorsAndExecutionInfo() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let calls = try await managers[1].observeCall("com.example.add")
            let returns = try await whileResponding(
                to: calls,
                { call in
                    guard let a = call.parameter(at: 0)?.intValue, let b = call.parameter(at: 1)?.intValue else {
                        try call.returnError(.invalidParameters, executionInfo: ["duration": 3])
                        return
                    }
                    try call.returnResult(.int(a + b), executionInfo: ["duration": 12])
                }
            ) {
                let sum = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: [42, 43]))
                    .first(timeout: .seconds(5))
                let failure = try await managers[0].call(CallEvent(operation: "com.example.add", parameters: ["x": 1]))
                    .first(timeout: .seconds(5))
                return (sum, failure)
            }
            #expect(returns.0.result == 85)
            #expect(returns.0.executionInfo == ["duration": 12])
            #expect(returns.1.error == RemoteCallError(code: -32602, message: "Invalid params"))
            #expect(returns.1.result == nil)
        }
    }

    @Test func voidResultIsNull() async throws {
        try await withOnlineManagers(count: 2) { managers, _ in
            let calls = try await managers[1].observeCall("com.example.noop")
            let result = try await whileResponding(to: calls, { try $0.returnResult(nil) }) {
                try await managers[0].call(CallEvent(operation: "com.example.noop")).first(timeout: .seconds(5))
            }
            #expect(result.result == .null)
        }
    }

    @Test(arguments: ["\"text\"", "null", "3"])
    func parametersMustBeArrayOrObject(json: String) throws {
        let value = try AnyCodable(json: Array(json.utf8))
        #expect { try CallEvent(operation: "op", parameters: value) } throws: {
            ($0 as? CommunicationError)?.code == .invalidArgument
        }
    }

    @Test func noAnswerTimesOut() async throws {
        try await withOnlineManagers(count: 1) { managers, _ in
            let returns = try await managers[0].call(CallEvent(operation: "com.example.nobody"))
            await #expect { _ = try await returns.first(timeout: .milliseconds(50)) } throws: {
                ($0 as? CommunicationError)?.code == .timedOut
            }
        }
    }
}

/// Publishes messages on `bus` through a bare connection, as a foreign (possibly misbehaving) client.
func publishRaw(on bus: InProcessBus, _ messages: [(String, String)]) async throws {
    try await InProcessTransport(bus: bus).withConnection(
        .init(clientID: "rogue-\(ObjectID.random())"),
        onMessage: { _ in }
    ) {
        connection in
        for (topic, payload) in messages {
            try await connection.publish(TransportMessage(topic: topic, payload: Array(payload.utf8)))
        }
    }
}
