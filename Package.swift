// swift-tools-version: 6.2
//
// CoatySwift: Coaty-style agents in Swift 6, with no package dependencies.
// Module layout (one concern each, bottom to top):
//   CoatyCore          logging, topic names and filters, QoS: shared by everything
//   CoatyModel         CoatyObject hierarchy, ObjectFamily, AnyCodable, coding layer, filters
//   CoatyTransport     the Transport contract: connections, messages, errors
//   CoatyCommunication in-process transport, events, topics, CommunicationManager
//   CoatyControllers   Container, controllers, object lifecycle and cache, historian, IO routing, SensorThings
//   CoatySockets       the only module touching the OS socket API (epoll and poll reactors, TCP)
//   CoatyMQTTPackets   pure MQTT 3.1.1 packet codec, shared by client and broker
//   CoatyWebSocket     RFC 6455 WebSocket (handshake, frames, connection) for MQTT over ws://
//   CoatyTLS           TLS over TCP for mqtts://, through OpenSSL 3 loaded at run time (no headers needed)
//   CoatyMQTT          MQTT client and the MQTTTransport
//   CoatyBroker        embedded MQTT 3.1.1 broker
//   CoatyTesting       test support for apps built on the framework
//   TestSupport        this package's own test helpers (child processes, mosquitto, loopback ports);
//                      not a product
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
        .library(name: "CoatyTransport", targets: ["CoatyTransport"]),
        .library(name: "CoatyCommunication", targets: ["CoatyCommunication"]),
        .library(name: "CoatyControllers", targets: ["CoatyControllers"]),
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
        .target(name: "CoatyTransport", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(
            name: "CoatyCommunication",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoatyControllers",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication"],
            swiftSettings: swiftSettings
        ),
        .target(name: "CoatySockets", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(name: "CoatyMQTTPackets", dependencies: ["CoatyCore"], swiftSettings: swiftSettings),
        .target(name: "CoatyWebSocket", dependencies: ["CoatyCore", "CoatySockets"], swiftSettings: swiftSettings),
        .target(name: "CoatyTLS", dependencies: ["CoatySockets"], swiftSettings: swiftSettings),
        .target(
            name: "CoatyMQTT",
            dependencies: [
                "CoatyCore", "CoatyTransport", "CoatyMQTTPackets", "CoatySockets", "CoatyWebSocket", "CoatyTLS",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoatyBroker",
            dependencies: ["CoatyCore", "CoatyMQTTPackets", "CoatySockets", "CoatyWebSocket", "CoatyTLS"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoatyTesting",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TestSupport",
            dependencies: ["CoatySockets"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CoatyCLI",
            dependencies: [
                "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyControllers", "CoatyMQTT",
                "CoatyBroker",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CoatyTestAgent",
            dependencies: ["CoatyCore", "CoatyModel", "CoatyCommunication", "CoatyMQTT"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HelloWorld",
            dependencies: [
                "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyControllers", "CoatyMQTT",
                "CoatyBroker",
            ],
            path: "Examples/HelloWorld",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "IORouting",
            dependencies: [
                "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyControllers", "CoatyMQTT",
                "CoatyBroker",
            ],
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
            dependencies: ["CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyControllersTests",
            dependencies: [
                "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyControllers", "CoatyTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatySocketsTests",
            dependencies: ["CoatySockets", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyWebSocketTests",
            dependencies: ["CoatyWebSocket", "CoatySockets"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyTLSTests",
            dependencies: ["CoatyTLS", "CoatySockets", "TestSupport"],
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
                "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyMQTT", "CoatyMQTTPackets",
                "CoatySockets", "TestSupport", "CoatyTestAgent", "CoatyBroker", "CoatyTesting", "CoatyTLS",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyBrokerTests",
            dependencies: [
                "CoatyCore", "CoatyBroker", "CoatyMQTTPackets", "CoatySockets", "TestSupport", "CoatyMQTT",
                "CoatyTransport", "CoatyCommunication", "CoatyWebSocket", "CoatyTLS",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoatyCLITests",
            dependencies: [
                "CoatyCLI", "CoatyCore", "CoatyModel", "CoatyTransport", "CoatyCommunication", "CoatyMQTT",
                "CoatyBroker", "CoatySockets",
                "CoatyTesting", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ExampleTests",
            dependencies: [
                "HelloWorld", "IORouting", "CoatyTransport", "CoatyCommunication", "CoatyModel", "CoatyBroker",
                "CoatyMQTT", "CoatyTesting", "TestSupport", "CoatyCore",
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
