import CoatyCommunication
import CoatyCore
import CoatyModel
import CoatyTesting
import CoatyTransport
import Testing

/// What coaty-js agents accept, our agents accept too. Where a value cannot be used
/// as it stands, the event is still delivered and the value reported as a diagnostic.
@Suite(.timeLimit(.minutes(1)))
struct AcceptLikeCoatyJSTests {
    static let source = "11111111-1111-4111-8111-111111111111"

    @Test(arguments: [
        (#"{"objectId":""}"#, ["objectId"]),
        (#"{"externalId":""}"#, ["externalId"]),
        (#"{"externalId":"","objectId":""}"#, ["objectId", "externalId"]),
        (#"{"externalId":"","objectTypes":["x"]}"#, ["externalId"]),
    ])
    func discoverWithAnEmptyIDIsDeliveredAndReported(payload: String, reported: [String]) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let discovers = await managers[0].observeDiscover()
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/DSC/\(Self.source)/\(ObjectID.random())"
            try await publishRaw(on: bus, [(topic, payload)])
            let discover = try await discovers.first(timeout: .seconds(5))
            #expect(discover.objectID?.rawValue.isEmpty ?? true && discover.externalID?.isEmpty ?? true)
            var iterator = diagnostics.makeAsyncIterator()
            for field in reported {
                let diagnostic = try #require(await iterator.next())
                #expect(diagnostic.kind == .unusableValue && diagnostic.topic == topic)
                #expect(diagnostic.reason.contains(field))
            }
        }
    }

    /// A Discover built here still may not carry an empty id: no valid object has one.
    @Test func discoverBuiltHereStillNeedsNonEmptyIDs() {
        #expect(throws: CommunicationError.self) { try DiscoverEvent.byObjectID("") }
        #expect(throws: CommunicationError.self) { try DiscoverEvent.byExternalID("") }
    }

    @Test func emptySourceIDLevelIsDeliveredAndReported() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let advertises = await managers[0].observeAdvertise(coreType: .coatyObject)
            let diagnostics = managers[0].observeDiagnostics()
            let valid = #"{"object":{"objectId":"o","coreType":"CoatyObject","objectType":"x","name":"n"}}"#
            try await publishRaw(on: bus, [("coaty/3/-/ADV:CoatyObject/", valid)])
            let advertise = try await advertises.first(timeout: .seconds(5))
            #expect(advertise.origin?.sourceID == "")
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.kind == .unusableValue && diagnostic.reason.contains("source id"))
        }
    }

    /// A request on an empty correlation level is delivered; its response goes to an empty level too,
    /// where a requester that used one listens (coaty-js would answer on a level `undefined`).
    @Test func emptyCorrelationIDLevelIsDeliveredAndAnsweredOnAnEmptyLevel() async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let discovers = await managers[0].observeDiscover()
            let diagnostics = managers[0].observeDiagnostics()
            let responses = AsyncStream<TransportMessage>.makeStream()
            try await InProcessTransport(bus: bus).withConnection(
                .init(clientID: "listener"),
                onMessage: { responses.continuation.yield($0) }
            ) { connection in
                try await connection.subscribe(to: [try TopicFilter("coaty/3/-/RSV/+/")])
                try await connection.publish(
                    TransportMessage(
                        topic: "coaty/3/-/DSC/\(Self.source)/",
                        payload: Array(#"{"objectId":"wanted"}"#.utf8)
                    )
                )
                let discover = try await discovers.first(timeout: .seconds(5))
                #expect(discover.origin?.correlationID == "")
                let diagnostic = try #require(await diagnostics.first { _ in true })
                #expect(diagnostic.kind == .unusableValue && diagnostic.reason.contains("correlation id"))
                try discover.resolve(ResolveEvent(object: CoatyObject(objectType: "x", objectID: "wanted", name: "w")))
                let response = try #require(await responses.stream.first { _ in true })
                #expect(response.topic == "coaty/3/-/RSV/\(managers[0].identity.objectID)/")
            }
        }
    }

    @Test(arguments: [
        (#"{"error":{"code":"weird","message":5}}"#, 0, "5", 2),
        (#"{"error":{"code":null,"message":"m"}}"#, 0, "m", 1),
        (#"{"error":{"code":7.5,"message":["a"]}}"#, 0, #"["a"]"#, 2),
        (#"{"error":{"code":-32602,"message":"Invalid params"}}"#, -32602, "Invalid params", 0),
    ])
    func returnErrorOfAnyJSONValuesIsDeliveredAndReported(payload: String, code: Int, message: String, reports: Int)
        async throws
    {
        try await withOnlineManagers(count: 1) { managers, bus in
            let correlationID = ObjectID.random()
            let returns = try await managers[0].call(CallEvent(operation: "op"), correlationID: correlationID)
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/RTN/\(Self.source)/\(correlationID)"
            try await publishRaw(on: bus, [(topic, payload)])
            let error = try #require(try await returns.first(timeout: .seconds(5)).error)
            #expect(error.code == code && error.message == message)
            let received = try AnyCodable(json: payload)["error"]
            #expect(error.receivedError == (reports == 0 ? nil : received))
            var iterator = diagnostics.makeAsyncIterator()
            for _ in 0..<reports {
                #expect(await iterator.next()?.kind == .unusableValue)
            }
        }
    }

    /// What coaty-js rejects stays rejected: an error that is not an object, or lacks code or message.
    @Test(arguments: [#"{"error":"boom"}"#, #"{"error":null}"#, #"{"error":[1]}"#, #"{"error":{"message":"m"}}"#])
    func returnErrorWithoutCodeOrMessageIsStillInvalid(payload: String) async throws {
        try await withOnlineManagers(count: 1) { managers, bus in
            let correlationID = ObjectID.random()
            let returns = try await managers[0].call(CallEvent(operation: "op"), correlationID: correlationID)
            let diagnostics = managers[0].observeDiagnostics()
            let topic = "coaty/3/-/RTN/\(Self.source)/\(correlationID)"
            try await publishRaw(on: bus, [(topic, payload), (topic, #"{"result":null}"#)])
            let diagnostic = try #require(await diagnostics.first { _ in true })
            #expect(diagnostic.kind == .invalidInboundEvent && diagnostic.topic == topic)
            #expect(try await returns.first(timeout: .seconds(5)).result == .null)
        }
    }
}
