import CoatyMQTTPackets
import Testing

/// Checks the codec against every byte sequence in mosquitto's MQTT 3.1.1 broker conformance data.
///
/// The broker test replays these over TCP; here each packet is fed to the decoder one byte at a time
/// to check that the codec gives the broker what it needs to pass: valid input decodes, and every
/// sequence that expects a disconnect either fails to decode or holds a packet the broker must
/// reject for a reason outside the codec (listed explicitly below).
struct BrokerSequenceTests {
    static let cases: [BrokerSequences.Case] = (try? BrokerSequences.load()) ?? []

    /// Decodes all of `bytes` byte by byte; returns the packets or the first error.
    static func decode(_ bytes: [UInt8]) -> Result<[MQTTPacket], MQTTDecodingError> {
        var decoder = MQTTPacketDecoder(maximumPacketSize: 1 << 20)
        var packets: [MQTTPacket] = []
        do throws(MQTTDecodingError) {
            for byte in bytes {
                decoder.append(CollectionOfOne(byte))
                while let packet = try decoder.next() { packets.append(packet) }
            }
        } catch {
            return .failure(error)
        }
        return .success(packets)
    }

    @Test func conformanceDataIsPresent() {
        // 261 v3.1.1 tests, 5 regressions, 1 broker check (the fixture README).
        #expect(Self.cases.count == 267)
    }

    @Test func everyPacketTheBrokerMustSendEncodesExactly() throws {
        var checked = 0
        for testCase in Self.cases {
            for bytes in testCase.receives {
                let packets = try Self.decode(bytes).get()
                #expect(packets.count == 1, "\(testCase)")
                for packet in packets {
                    #expect(try packet.encoded() == bytes, "\(testCase)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test func everySequenceThatKeepsTheConnectionDecodes() throws {
        var checked = 0
        for testCase in Self.cases where !testCase.expectsDisconnect {
            for bytes in testCase.sends {
                let result = Self.decode(bytes)
                #expect(throws: Never.self, "\(testCase)") { try result.get() }
                if let packets = try? result.get() {
                    #expect(packets.count == 1, "\(testCase)")
                    #expect(try packets.first?.encoded() == bytes, "\(testCase)")
                }
                checked += 1
            }
        }
        #expect(checked > 40)
    }

    /// Tests whose last packet is well-formed but must still make the broker close: protocol-flow
    /// violations the broker detects from its state, not from the bytes.
    static let flowViolations: Set<String> = [
        "v3.1.1 FLOW QoS 1 PUBLISH-PUBREC",  // PUBREC for a QoS 1 message
        "v3.1.1 FLOW QoS 1 PUBLISH-PUBCOMP",
        "v3.1.1 FLOW QoS 2 PUBLISH-PUBACK",  // PUBACK for a QoS 2 message
        "v3.1.1 FLOW QoS 2 PUBLISH-PUBCOMP",
        "v3.1.1 FLOW QoS 2 PUBLISH-PUBREC-PUBREL-PUBACK",
    ]

    @Test func everySequenceThatExpectsADisconnectIsRejected() {
        var decoderRejections = 0
        for testCase in Self.cases where testCase.expectsDisconnect {
            // Replay the client's side: the default CONNECT (if any), then the sends.
            var sawConnect = testCase.connects
            var rejectedByBroker = false
            var rejectedByDecoder = false
            for bytes in testCase.sends where !rejectedByBroker && !rejectedByDecoder {
                switch Self.decode(bytes) {
                case .failure(.unsupportedProtocolLevel):
                    // The broker answers CONNACK 1 and closes; the data lists that CONNACK.
                    #expect(testCase.receives == [[0x20, 0x02, 0x00, 0x01]], "\(testCase)")
                    rejectedByDecoder = true
                case .failure:
                    #expect(testCase.receives.isEmpty, "\(testCase): no reply expected before the close")
                    rejectedByDecoder = true
                case .success(let packets):
                    for packet in packets {
                        switch packet {
                        case .connect(let connect):
                            if sawConnect {
                                rejectedByBroker = true  // second CONNECT [MQTT-3.1.0-2]
                            } else if connect.clientID.isEmpty && !connect.cleanSession {
                                #expect(testCase.receives == [[0x20, 0x02, 0x00, 0x02]], "\(testCase)")
                                rejectedByBroker = true  // identifier rejected [MQTT-3.1.3-8]
                            }
                            sawConnect = true
                        case _ where !sawConnect:
                            rejectedByBroker = true  // first packet not CONNECT [MQTT-3.1.0-1]
                        case .connack, .suback, .unsuback, .pingresp:
                            rejectedByBroker = true  // server-to-client packet from a client
                        case .disconnect:
                            rejectedByBroker = true  // normal close
                        default:
                            break
                        }
                    }
                }
            }
            if rejectedByDecoder { decoderRejections += 1 }
            let rejected = rejectedByDecoder || rejectedByBroker || Self.flowViolations.contains(testCase.fullName)
            #expect(rejected, "\(testCase) expects a disconnect, but its packets decode")
        }
        #expect(decoderRejections > 120)
    }
}
