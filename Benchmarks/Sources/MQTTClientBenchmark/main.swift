import BenchmarkSupport
// MQTT client throughput: our client against mosquitto's own C tools, on the same mosquitto, in one run.
//
// For each QoS (0, 1) and payload size (100 B, 1 KB), N messages go from one publisher connection to
// one subscriber connection through a mosquitto started by this program on a free loopback port:
//
// - Baseline (C): `mosquitto_sub -C N+1 -q Q` subscribes (readiness is detected from a retained marker
//   it prints first; it prints to a temporary file), then `mosquitto_pub -l -q Q` publishes N lines read
//   from a file. The time runs from starting mosquitto_pub until mosquitto_sub has received all N
//   messages and exited. The tools run as `ChildProcess`es (posix_spawn), for the reason given there.
// - Ours: a subscriber `MQTTTransport` connection subscribes at QoS Q; the time runs from opening the
//   publisher connection until the subscriber has received all N messages. QoS 0 publishes are issued
//   back to back; QoS 1 publishes run in 20 concurrent lanes, mosquitto_pub's default in-flight window.
//
// Each configuration runs 3 times per side; the best time of each side is reported, with the ratio
// ours / C in messages per second (> 1.0 means our client is faster).
//
//   swift run -c release --package-path Benchmarks MQTTClientBenchmark
//
// With `--ours-only`, only our client runs (no C tools), so two builds of the client can be compared
// run against run; `--runs N` sets the runs per side; `--qos Q` and `--size S` (100 or 1024) run one
// configuration only.
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyTransport
import Foundation
import Glibc

func stop(_ process: ChildProcess) {
    process.kill()
    process.waitUntilExit()
}

func payload(size: Int, index: Int) -> [UInt8] {
    // Printable bytes, no newline (mosquitto_pub -l splits on newlines).
    var bytes = [UInt8](repeating: UInt8(ascii: "a") + UInt8(index % 26), count: size)
    bytes[0] = UInt8(ascii: "m")
    return bytes
}

/// One run of our client; returns seconds.
func runOurs(url: String, topic: String, qos: CoatyCore.QualityOfService, count: Int, size: Int, run: Int) async throws
    -> Double
{
    let transport = MQTTTransport(configuration: .init(brokerURL: url, subscriptionQoS: qos))
    let messages = (0..<26).map { TransportMessage(topic: topic, payload: payload(size: size, index: $0), qos: qos) }
    return try await clientThroughput(transport, topic: topic, messages: messages, count: count, run: run)
}

func format(_ value: Double) -> String {
    let rounded = (value * 100).rounded() / 100
    return String(rounded)
}

let mosquittoPath = try findExecutable(["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"])
let tools = try MosquittoTools()
let port = try LoopbackPort.unused()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-mqtt-bench-\(UUID())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let configPath = directory.appendingPathComponent("mosquitto.conf").path
// No per-client queue limit for QoS 0, so neither side loses messages under load.
try
    "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\nmax_inflight_messages 20\n"
    .write(toFile: configPath, atomically: true, encoding: .utf8)
let broker = try ChildProcess.spawn(mosquittoPath, ["-c", configPath])
defer { stop(broker) }
let url = "mqtt://127.0.0.1:\(port)"
// Wait until the broker accepts connections.
let readyDeadline = ContinuousClock.now + .seconds(10)
while true {
    do {
        try await MQTTTransport(brokerURL: url).withConnection(.init(clientID: "probe"), onMessage: { _ in }) { _ in }
        break
    } catch {
        guard ContinuousClock.now < readyDeadline else { throw BenchmarkError("mosquitto did not start: \(error)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

let arguments = CommandLine.arguments.dropFirst()
let isOursOnly = arguments.contains("--ours-only")
/// The integer after `option`, if given.
func integerArgument(_ option: String) -> Int? {
    arguments.firstIndex(of: option).flatMap { Int(arguments[arguments.index(after: $0)]) }
}
let runs = integerArgument("--runs") ?? 3
let onlyQoS = integerArgument("--qos")
let onlySize = integerArgument("--size")

print(
    "MQTT client throughput, publisher → mosquitto 2 → subscriber on loopback (best of \(runs) runs per side)"
)
print("config           messages   C tools msg/s   ours msg/s   ratio (ours / C)")
var run = 0
for (qos, qosNumber) in [(CoatyCore.QualityOfService.atMostOnce, 0), (.atLeastOnce, 1)] {
    for size in [100, 1024] where (onlyQoS ?? qosNumber) == qosNumber && (onlySize ?? size) == size {
        let count = qos == .atMostOnce ? (size == 100 ? 200_000 : 100_000) : (size == 100 ? 50_000 : 30_000)
        let topic = "bench/q\(qosNumber)/s\(size)"
        let inputFile = directory.appendingPathComponent("input-\(qosNumber)-\(size).txt").path
        if !isOursOnly {
            var lines: [UInt8] = []
            lines.reserveCapacity(count * (size + 1))
            for index in 0..<count {
                lines += payload(size: size, index: index)
                lines.append(UInt8(ascii: "\n"))
            }
            _ = FileManager.default.createFile(atPath: inputFile, contents: Data(lines))
        }
        var bestC = Double.infinity
        var bestOurs = Double.infinity
        for _ in 0..<runs {
            run += 1
            if !isOursOnly {
                bestC = min(
                    bestC,
                    try tools.throughput(
                        connection: ["-h", "127.0.0.1", "-p", "\(port)"],
                        topic: topic + "/c",
                        qos: qosNumber,
                        count: count,
                        inputFile: inputFile
                    )
                )
            }
            bestOurs = min(
                bestOurs,
                try await runOurs(url: url, topic: topic + "/ours", qos: qos, count: count, size: size, run: run)
            )
        }
        let cRate = Double(count) / bestC
        let ourRate = Double(count) / bestOurs
        let label = "QoS \(qosNumber), \(size == 100 ? "100 B" : "1 KB ")"
        print(
            "\(label)    \(String(count).padding(toLength: 8, withPad: " ", startingAt: 0))   "
                + "\(String(Int(cRate)).padding(toLength: 13, withPad: " ", startingAt: 0))   "
                + "\(String(Int(ourRate)).padding(toLength: 10, withPad: " ", startingAt: 0))   \(format(ourRate / cRate))×"
        )
    }
}
