// Advertise events per second published → observed over the in-process transport, and Call → Return
// round-trip latency, each beside the pure encode + decode cost of the same events, measured in the
// same run. Target: transport and routing add ≤ 25% over encode + decode.
//
// The round trip is set beside three lines: the payloads alone; the complete events (payloads plus
// the topics that carry the event type, source and correlation id, formatted and parsed), against
// which the target is judged, since topic formatting and parsing are the events' coding and neither
// transport nor routing; and a minimal single-threaded round trip under the protocol, which shows how
// little of the 25 % the protocol's own routing leaves (Docs/Benchmarks.md).
//
//   swift run -c release --package-path Benchmarks CommunicationBenchmark
import CoatyCommunication
import CoatyModel
import Foundation

/// The wire payload of an Advertise or Update, `{"object": …}`, coded the way the manager codes it:
/// CoatyJSONEncoder out, CoatyJSONDecoder through the family in.
struct ObjectPayload: Codable {
    let object: CoatyObject

    init(object: CoatyObject) { self.object = object }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.object = try container.decodeObject(CoatyObject.self, forKey: .object)
    }

    enum CodingKeys: String, CodingKey { case object }
}

/// `{"parameters": …}` and `{"result": …}`.
struct CallPayload: Codable { let parameters: AnyCodable }
struct ReturnPayload: Codable { let result: AnyCodable }

let family = ObjectFamily()
let encoder = CoatyJSONEncoder()
let decoder = CoatyJSONDecoder(family: family)

/// A ~1 KB object: a canonical-type object (one Advertise message each) with a realistic property bag.
func makeObject(_ index: Int) -> CoatyObject {
    CoatyObject(
        objectType: "coaty.CoatyObject",
        name: "Sensor \(index)",
        externalID: "ext-\(index)",
        parentObjectID: "22222222-2222-4222-8222-222222222222",
        customProperties: [
            "floor": .int(index % 12), "unit": "Cel", "site": "lab", "value": .double(21.5 + Double(index % 7)),
            "tags": ["temperature", "indoor", "calibrated", "golden"],
            "history": .array((0..<24).map { .double(20 + Double($0) / 10) }),
            "location": ["building": "B7", "room": "2.041", "position": ["x": 12.5, "y": 3.25, "z": 1.0]],
            "description": .string(String(repeating: "A sensor for the hello-world benchmark. ", count: 5)),
        ]
    )
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return seconds(ContinuousClock.now - start)
}

// MARK: Advertise throughput

let count = 20_000
let objects = (0..<count).map(makeObject)
let sampleBytes = try encoder.encode(ObjectPayload(object: objects[0])).count

/// Pure cost: encode the payload, decode it through the family.
func encodeDecodeAdvertises() throws -> Double {
    try measure {
        for object in objects {
            let bytes = Array(try encoder.encode(ObjectPayload(object: object)))
            _ = try decoder.decode(ObjectPayload.self, from: bytes)
        }
    }
}

/// Full path: publisher manager → in-process bus → observer manager, decoded, delivered to the stream.
@concurrent func publishObserveAdvertises() async throws -> Double {
    let bus = InProcessBus()
    func manager(_ name: String) -> CommunicationManager {
        CommunicationManager(
            transport: InProcessTransport(bus: bus),
            configuration: .init(
                identity: Identity(name: name),
                objectFamily: family,
                observerBufferSize: count + 100,
                outboxCapacity: count + 100
            )
        )
    }
    let publisher = manager("publisher")
    let observer = manager("observer")
    return try await withThrowingTaskGroup(of: Void.self) { group in
        for agent in [publisher, observer] {
            let states = agent.observeCommunicationState()
            group.addTask { try await agent.run() }
            _ = await states.first { $0 == .online }
        }
        let advertises = await observer.observeAdvertise(coreType: .coatyObject)
        let start = ContinuousClock.now
        for object in objects { try await publisher.publish(AdvertiseEvent(object)) }
        var received = 0
        for await _ in advertises {
            received += 1
            if received == count { break }
        }
        let elapsed = seconds(ContinuousClock.now - start)
        publisher.finish()
        observer.finish()
        try await group.waitForAll()
        return elapsed
    }
}

// MARK: Call → Return latency

let roundTrips = 1_000
let roundTripRounds = 9

// The three baselines below share these steps, so that they differ only in what they add.

/// The Call payload, encoded.
func encodeCall(_ index: Int) throws -> [UInt8] {
    Array(try encoder.encode(CallPayload(parameters: ["name": "Ada", "index": .int(index)])))
}

/// The callee's work: decode the Call payload, answer, encode the Return payload.
func answerCall(_ call: [UInt8]) throws -> [UInt8] {
    let parameters = try decoder.decode(CallPayload.self, from: call).parameters
    return Array(try encoder.encode(ReturnPayload(result: .string("Hello, \(parameters["name"]?.stringValue ?? "")!"))))
}

/// The caller's work on the answer: decode the Return payload.
func takeReturn(_ result: [UInt8]) throws {
    _ = try decoder.decode(ReturnPayload.self, from: result)
}

func encodeDecodeCallReturn() throws -> [Double] {
    try (0..<roundTrips).map { index in
        try measure { try takeReturn(try answerCall(try encodeCall(index))) }
    }
}

/// The same Call and Return in their complete wire form: the payloads as above, plus what a Coaty
/// event carries in its topic (`coaty/3/<ns>/CLL:<operation>/<source>/<correlationID>` and
/// `…/RTN/<source>/<correlationID>`): a fresh correlation id, each topic formatted by the publisher and
/// parsed by the receiver. No subscription, no matching, no hand-over: this is the work any
/// implementation of the protocol does for a round trip before transport and routing add theirs.
let callerID = ObjectID.random()
let calleeID = ObjectID.random()

func callTopic(_ correlationID: ObjectID) -> String {
    CoatyTopic(
        namespace: CoatyTopic.defaultNamespace,
        code: .call,
        filter: "com.example.greet",
        sourceID: callerID,
        correlationID: correlationID
    ).formatted
}

func returnTopic(_ correlationID: ObjectID?) -> String {
    CoatyTopic(namespace: CoatyTopic.defaultNamespace, code: .return, sourceID: calleeID, correlationID: correlationID)
        .formatted
}

/// Parses a received topic and returns its correlation id.
func correlationID(of topic: String) throws -> ObjectID {
    guard let correlationID = CoatyTopic(parsing: topic)?.correlationID else { throw BenchmarkError.unparsable(topic) }
    return correlationID
}

func encodeDecodeCallReturnEvents() throws -> [Double] {
    try (0..<roundTrips).map { index in
        try measure {
            let sent = ObjectID.random()
            let call = (topic: callTopic(sent), payload: try encodeCall(index))
            let answer = (topic: returnTopic(try correlationID(of: call.topic)), payload: try answerCall(call.payload))
            guard try correlationID(of: answer.topic) == sent else { throw BenchmarkError.unparsable(answer.topic) }
            try takeReturn(answer.payload)
        }
    }
}

/// The least a round trip can cost under the protocol, for reference: the complete events as above,
/// plus the response filter the caller subscribes (`coaty/3/+/RTN/+/<correlationID>`), each topic
/// matched against the filter that receives it, and a table of outstanding requests, all on one thread
/// with no locks, no streams and no hand-over between agents. A real transport and manager do at
/// least this much; it shows what part of the round trip's ratio is the protocol's own work.
let calleeFilter = CoatyTopic.subscriptionFilter(.call, filter: "com.example.greet", namespace: nil)

func minimalProtocolRoundTrips() throws -> [Double] {
    var outstanding: [ObjectID: Int] = [:]
    return try (0..<roundTrips).map { index in
        try measure {
            let sent = ObjectID.random()
            let responseFilter = CoatyTopic.subscriptionFilter(.return, namespace: nil, correlationID: sent)
            outstanding[sent] = index
            let call = (topic: callTopic(sent), payload: try encodeCall(index))
            guard calleeFilter.matches(call.topic) else { throw BenchmarkError.unparsable(call.topic) }
            let answer = (topic: returnTopic(try correlationID(of: call.topic)), payload: try answerCall(call.payload))
            guard responseFilter.matches(answer.topic),
                outstanding.removeValue(forKey: try correlationID(of: answer.topic)) != nil
            else { throw BenchmarkError.unparsable(answer.topic) }
            try takeReturn(answer.payload)
        }
    }
}

enum BenchmarkError: Error { case unparsable(String) }

/// How the callee answers: from a task consuming `observeCall`'s stream, or from a handler that
/// `handleCalls` runs where the Call is decoded.
enum Callee: String, CaseIterable {
    case handler = "callee answers in a handler (handleCalls)"
    case stream = "callee answers from a task (observeCall stream)"
}

/// Full path: caller manager → in-process bus → callee manager → bus → caller's response stream,
/// with the response subscription, `first(timeout:)` and its release included.
@concurrent func callReturnRoundTrips(_ callee: Callee) async throws -> [Double] {
    let bus = InProcessBus()
    let caller = CommunicationManager(
        transport: InProcessTransport(bus: bus),
        configuration: .init(identity: Identity(name: "caller"))
    )
    let responder = CommunicationManager(
        transport: InProcessTransport(bus: bus),
        configuration: .init(identity: Identity(name: "callee"))
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        for agent in [caller, responder] {
            let states = agent.observeCommunicationState()
            group.addTask { try await agent.run() }
            _ = await states.first { $0 == .online }
        }
        let answer: @Sendable (CallEvent) throws -> Void = { call in
            try call.returnResult(.string("Hello, \(call.parameter(named: "name")?.stringValue ?? "")!"))
        }
        var registration: EventHandlerRegistration?
        switch callee {
        case .handler:
            registration = try await responder.handleCalls("com.example.greet", answer)
        case .stream:
            let calls = try await responder.observeCall("com.example.greet")
            group.addTask { for await call in calls { try answer(call) } }
        }
        var latencies: [Double] = []
        latencies.reserveCapacity(roundTrips)
        for index in 0..<roundTrips {
            let start = ContinuousClock.now
            let returns = try await caller.call(
                CallEvent(operation: "com.example.greet", parameters: ["name": "Ada", "index": .int(index)])
            )
            _ = try await returns.first(timeout: .seconds(5))
            latencies.append(seconds(ContinuousClock.now - start))
        }
        registration?.cancel()
        caller.finish()
        responder.finish()
        group.cancelAll()
        try? await group.waitForAll()
        return latencies
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

// MARK: Run

print(
    "CommunicationBenchmark: \(count) Advertise events of \(sampleBytes) bytes; \(roundTripRounds) × \(roundTrips) Call → Return round trips per callee style"
)
// Warm up both paths, then interleave rounds and keep the best of each.
_ = try encodeDecodeAdvertises()
_ = try await publishObserveAdvertises()
var bestCoding = Double.infinity
var bestPipeline = Double.infinity
for _ in 0..<5 {
    bestCoding = min(bestCoding, try encodeDecodeAdvertises())
    bestPipeline = min(bestPipeline, try await publishObserveAdvertises())
}
let codingRate = Double(count) / bestCoding
let pipelineRate = Double(count) / bestPipeline
print("")
print("Advertise, published → observed over the in-process transport")
print(
    "  encode + decode only:           \(format(codingRate, 0)) events/s  (\(format(bestCoding / Double(count) * 1e6)) µs/event)"
)
print(
    "  publish → route → observe:      \(format(pipelineRate, 0)) events/s  (\(format(bestPipeline / Double(count) * 1e6)) µs/event)"
)
print("  ratio (time per event, pipeline / coding): \(format(bestPipeline / bestCoding))×   target ≤ 1.25×")

_ = try encodeDecodeCallReturn()
_ = try encodeDecodeCallReturnEvents()
_ = try minimalProtocolRoundTrips()
for callee in Callee.allCases { _ = try await callReturnRoundTrips(callee) }
var codingLatencies: [Double] = []
var eventCodingLatencies: [Double] = []
var minimalLatencies: [Double] = []
var roundTripLatencies: [Callee: [Double]] = [:]
// Short rounds, interleaved: this machine has slow stretches, and every measurement should see them alike.
for _ in 0..<roundTripRounds {
    codingLatencies += try encodeDecodeCallReturn()
    eventCodingLatencies += try encodeDecodeCallReturnEvents()
    minimalLatencies += try minimalProtocolRoundTrips()
    for callee in Callee.allCases { roundTripLatencies[callee, default: []] += try await callReturnRoundTrips(callee) }
}
let codingMedian = percentile(codingLatencies, 0.5)
let codingP99 = percentile(codingLatencies, 0.99)
let eventCodingMedian = percentile(eventCodingLatencies, 0.5)
let eventCodingP99 = percentile(eventCodingLatencies, 0.99)
print("")
print("Call → Return round trip over the in-process transport")
print(
    "  encode + decode of the Call and Return payloads:  median \(format(codingMedian * 1e6)) µs, p99 \(format(codingP99 * 1e6)) µs"
)
print(
    "  same, complete events (payloads, topics, correlation id): median \(format(eventCodingMedian * 1e6)) µs, p99 \(format(eventCodingP99 * 1e6)) µs (\(format(eventCodingMedian / codingMedian))× the payloads)"
)
let minimalMedian = percentile(minimalLatencies, 0.5)
print(
    "  minimal round trip under the protocol (one thread, no transport): median \(format(minimalMedian * 1e6)) µs (\(format(minimalMedian / eventCodingMedian))× the complete events, \(format(minimalMedian / codingMedian))× the payloads)"
)
for callee in Callee.allCases {
    let latencies = roundTripLatencies[callee] ?? []
    let median = percentile(latencies, 0.5)
    let p99 = percentile(latencies, 0.99)
    print("  round trip, \(callee.rawValue):")
    print("    median \(format(median * 1e6)) µs, p99 \(format(p99 * 1e6)) µs")
    print(
        "    ratio to the complete events: median \(format(median / eventCodingMedian))×, p99 \(format(p99 / eventCodingP99))×   target ≤ 1.25×"
    )
    print("    ratio to the payloads alone:  median \(format(median / codingMedian))×, p99 \(format(p99 / codingP99))×")
}
