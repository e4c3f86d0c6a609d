// libFuzzer harness: inbound Coaty events (topic + payload), decoded as the CommunicationManager decodes
// them, then re-encoded and decoded again.
//
// fuzz-modules: CoatyCore CoatyModel CoatyTransport CoatyCommunication
// fuzz-options: -max_len=4096 -dict=Fuzz/Model/json.dict
//
// Run: bash Scripts/fuzz.sh InboundEventFuzzer [seconds]. The harness is compiled into CoatyCommunication, so it sees
// that module's internal declarations.
//
// Input: the topic name, a NUL byte, then the payload. Without a NUL, the first byte picks one of a few
// fixed topics (one per event code) and the rest is the payload.
//
// Oracle: nothing crashes, hangs or grows without bound; an event that decodes re-encodes (`EventCoding`),
// the encoding decodes again on the same topic, and its second encoding is the same JSON value as the
// first (the wire form is a fixed point after one round trip).

import CoatyCore
import CoatyModel
import CoatyTransport

/// Fixed topics for inputs without a NUL byte, one per event code.
let fixedTopics: [String] = [
    "coaty/3/-/ADV:Identity/11111111-1111-4111-8111-111111111111",
    "coaty/3/-/ADV::com.example.Light/11111111-1111-4111-8111-111111111111",
    "coaty/3/-/DAD/11111111-1111-4111-8111-111111111111",
    "coaty/3/-/CHN:channel/11111111-1111-4111-8111-111111111111",
    "coaty/3/-/ASC:context/11111111-1111-4111-8111-111111111111",
    "coaty/3/-/DSC/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/RSV/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/QRY/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/RTV/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/UPD:Identity/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/UPD::com.example.Light/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/CPL/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/CLL:switchLight/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
    "coaty/3/-/RTN/11111111-1111-4111-8111-111111111111/22222222-2222-4222-8222-222222222222",
]

/// The wire payload of a decoded event, encoded.
func encodedPayload(of event: InboundEvent) throws(CommunicationError) -> [UInt8] {
    switch event {
    case .advertise(let event): try EventCoding.encode(event.payload)
    case .deadvertise(let event): try EventCoding.encode(event.payload)
    case .channel(let event): try EventCoding.encode(event.payload)
    case .discover(let event): try EventCoding.encode(event.payload)
    case .resolve(let event): try EventCoding.encode(event.payload)
    case .query(let event): try EventCoding.encode(event.payload)
    case .retrieve(let event): try EventCoding.encode(event.payload)
    case .update(let event): try EventCoding.encode(event.payload)
    case .complete(let event): try EventCoding.encode(event.payload)
    case .call(let event): try EventCoding.encode(event.payload)
    case .return(let event): try EventCoding.encode(event.payload)
    case .associate(let event): try EventCoding.encode(event.payload)
    }
}

func decode(topic: String, payload: [UInt8]) -> InboundEvent? {
    guard let parsed = CoatyTopic(parsing: topic), parsed.code != .ioValue else { return nil }
    return try? InboundEvent.decode(
        TransportMessage(topic: topic, payload: payload),
        topic: parsed,
        family: ObjectFamily()
    )
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInboundEvent(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let topic: String
    let payload: [UInt8]
    if let nul = bytes.firstIndex(of: 0) {
        topic = String(decoding: bytes[..<nul], as: UTF8.self)
        payload = Array(bytes[(nul + 1)...])
    } else if let first = bytes.first {
        topic = fixedTopics[Int(first) % fixedTopics.count]
        payload = Array(bytes.dropFirst())
    } else {
        return 0
    }
    guard let event = decode(topic: topic, payload: payload) else { return 0 }
    let first: [UInt8]
    do {
        first = try encodedPayload(of: event)
    } catch {
        fatalError("a decoded event does not re-encode: \(error)")
    }
    guard let again = decode(topic: topic, payload: first) else {
        fatalError("the re-encoded event does not decode: \(String(decoding: first, as: UTF8.self))")
    }
    let second: [UInt8]
    do {
        second = try encodedPayload(of: again)
    } catch {
        fatalError("a re-decoded event does not re-encode: \(error)")
    }
    if first != second {
        let firstValue = try? AnyCodable(json: first)
        let secondValue = try? AnyCodable(json: second)
        guard let firstValue, firstValue == secondValue else {
            fatalError(
                "round trip unstable:\n\(String(decoding: first, as: UTF8.self))\n\(String(decoding: second, as: UTF8.self))"
            )
        }
    }
    return 0
}
