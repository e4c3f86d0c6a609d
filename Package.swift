// swift-tools-version: 6.2
//
// CoatySwift: Coaty-style agents in Swift 6, with no package dependencies.
// Module layout (one concern each, bottom to top):
//   CoatyCore          logging, topic names and filters, QoS: shared by everything
//   CoatyModel         CoatyObject hierarchy, ObjectFamily, AnyCodable, coding layer, filters
//   CoatyCommunication Transport protocol, in-process transport, events, CommunicationManager, controllers
//   CoatySockets       the only module touching the OS socket API (epoll and poll reactors, TCP)
//   CoatyMQTTPackets   pure MQTT 3.1.1 packet codec, shared by client and broker
//   CoatyWebSocket     RFC 6455 WebSocket (handshake, frames, connection) for MQTT over ws://
//   CoatyMQTT          MQTT client and the MQTTTransport
//   CoatyBroker        embedded MQTT 3.1.1 broker
//   CoatyTesting       test support for apps built on the framework
//   CoatyCLI           the `coaty` tool
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "CoatySwift",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CoatyCore", targets: ["CoatyCore"]),
        .library(name: "CoatyModel", targets: ["CoatyModel"]),
        .library(name: "CoatyCommunication", targets: ["CoatyCommunication"]),
        .library(name: "CoatyMQTT", targets: ["CoatyMQTT"]),
        .library(name: "CoatyBroker", targets: ["CoatyBroker"]),
        .library(name: "CoatyTesting", targets: ["CoatyTesting"]),
        .executable(name: "coaty", targets: ["CoatyCLI"]),
        .executable(name: "hello-world", targets: ["HelloWorld"]),
        .executable(name: "io-routing", targets: ["IORouting"]),
    ],
    targets: [
        .target(name: "CoatyCore", swiftSettings: swiftSettings),
        .target(name: "CoatyModel", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(
            name: "CoatyCommunication",
            dependencies: ["CoatyCore", "CoatyModel"],
            swiftSettings: swiftSettings
        ),
        .target(name: "CoatySockets", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(name: "CoatyMQTTPackets", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(name: "CoatyWebSocket", dependencies: ["CoatySockets"], swiftSettings: swiftSettings),
        .target(
            name: "CoatyMQTT",
            dependencies: ["CoatyCore", "CoatyCommunication", "CoatyMQTTPackets", "CoatySockets", "CoatyWebSocket"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoatyBroker",
            dependencies: ["CoatyCore", "CoatyMQTTPackets", "CoatySockets", "CoatyWebSocket"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoatyTesting",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatySockets"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CoatyCLI",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT", "CoatyBroker"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CoatyTestAgent",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HelloWorld",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT", "CoatyBroker"],
            path: "Examples/HelloWorld",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "IORouting",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT", "CoatyBroker"],
            path: "Examples/IORouting",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CoatyCoreTests", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CoatyModelTests",
            dependencies: ["CoatyCore", "CoatyModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyCommunicationTests",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatySocketsTests",
            dependencies: ["CoatySockets", "CoatyTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyWebSocketTests",
            dependencies: ["CoatyWebSocket", "CoatySockets"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyMQTTPacketsTests",
            dependencies: ["CoatyMQTTPackets"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyMQTTTests",
            dependencies: [
                "CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT", "CoatyMQTTPackets",
                "CoatySockets", "CoatyTesting", "CoatyTestAgent", "CoatyBroker",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyBrokerTests",
            dependencies: [
                "CoatyCore", "CoatyBroker", "CoatyMQTTPackets", "CoatySockets", "CoatyTesting", "CoatyMQTT",
                "CoatyCommunication", "CoatyWebSocket",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyCLITests",
            dependencies: [
                "CoatyCLI", "CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT", "CoatyBroker", "CoatyTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ExampleTests",
            dependencies: [
                "HelloWorld", "IORouting", "CoatyCommunication", "CoatyModel", "CoatyBroker", "CoatyMQTT",
                "CoatyTesting", "CoatyCore",
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
