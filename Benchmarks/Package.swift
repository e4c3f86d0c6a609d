// swift-tools-version: 6.2
// Benchmarks, kept out of the main build and out of `swift test`. Each prints its figures as ratios
// against a baseline measured in the same run. Run one with:
//   swift run -c release --package-path Benchmarks <Name>
import PackageDescription

let package = Package(
    name: "CoatyBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "CoatySwift", path: "..")],
    targets: [
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
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
                .product(name: "CoatyTesting", package: "CoatySwift"),
            ]
        ),
        .executableTarget(
            name: "BrokerBenchmark",
            dependencies: [
                .product(name: "CoatyCore", package: "CoatySwift"),
                .product(name: "CoatyCommunication", package: "CoatySwift"),
                .product(name: "CoatyMQTT", package: "CoatySwift"),
                .product(name: "CoatyBroker", package: "CoatySwift"),
                .product(name: "CoatyTesting", package: "CoatySwift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
