// swift-tools-version: 6.2
// Benchmarks, kept out of the main build and out of `swift test`. Each prints its figures as ratios
// against a baseline measured in the same run. Run one with:
//   swift run -c release --package-path Benchmarks <Name>
//
// BenchmarkSupport holds symbolic links to the main package's child-process helpers
// (Tests/TestSupport/Processes), which are `package` there and so not reachable from this package:
// compiled here, they are this package's own.
import PackageDescription

let package = Package(
    name: "CoatyBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "CoatySwift", path: "..")],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyTransport", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        .executableTarget(
            name: "ModelBenchmark",
            dependencies: [.product(name: "CoatyModel", package: "CoatySwift")]
        ),
        .executableTarget(
            name: "CommunicationBenchmark",
            dependencies: [
                .product(name: "CoatyModel", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
            ]
        ),
        .executableTarget(
            name: "MQTTClientBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyTransport", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
            ]
        ),
        .executableTarget(
            name: "BrokerBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
                .product(name: "CoatyBroker", package: "CoatySwift"),
            ]
        ),
        .executableTarget(
            name: "AgentBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyModel", package: "CoatySwift"),
                .product(name: "CoatyTransport", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
                .product(name: "CoatyBroker", package: "CoatySwift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
