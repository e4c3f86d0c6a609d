// Agents through real brokers, in one run: mosquitto and the embedded broker, each a child process
// with a plain and a TLS listener on loopback.
//
// 1. Call → Return between two agents beside a bare MQTT request/response ping-pong between two
//    connections of our client (same payload sizes, no Coaty events), medians and p99, in rounds
//    alternated across kinds and brokers. Target: the Coaty round trip ≤ 1.15× the ping-pong through
//    mosquitto; through the embedded broker ≤ mosquitto's median and p99. Beside them, the ping-pong
//    making the protocol's subscriptions (per request, or subscribed ahead) and Call → Return over the
//    in-process bus, whose sums show what a Call → Return costs at the least.
// 2. A burst of 20,000 Advertise events published back to back by one agent and observed by another:
//    all delivered, events per second beside `mosquitto_pub -l` / `mosquitto_sub` sending the very
//    same messages (recorded from the agents' first run).
// 3. TLS: QoS 0 throughput of our client through the embedded broker beside the C tools through
//    mosquitto (target ≥ 1.0×), and the round trips of 1 over TLS (target: the embedded broker ≤
//    mosquitto's latency).
//
//   swift run -c release --package-path Benchmarks AgentBenchmark
//       [--only tcp|burst|tls-throughput|tls] [--rounds N] [--kind call|ping|subscribing|ahead]
//       [--broker mosquitto|embedded]
import BenchmarkSupport
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyTransport
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "serve", arguments.count == 3 {
    try await BenchmarkBroker.serve(certificateFile: arguments[1], keyFile: arguments[2])
}

/// The value after `option`, if given.
func argument(_ option: String) -> String? {
    arguments.firstIndex(of: option).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let only = argument("--only")
// For profiling: one kind of round trip ("call", "ping", "subscribing" or "ahead") and one broker only.
let onlyKind = argument("--kind")
let onlyBroker = argument("--broker")
let rounds = argument("--rounds").flatMap(Int.init) ?? 10
let roundTripsPerRound = 500

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// The CPU time this process has used, user and system, all threads.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Writes a line at once, also into a pipe or file, so a long run shows its progress.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

let certificates = try await TestCertificates.make()
defer { certificates.remove() }
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-agent-bench-\(UUID())").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
let mosquitto = try await BenchmarkBroker.mosquitto(certificates: certificates, directory: directory)
defer { mosquitto.stop() }
let embedded = try await BenchmarkBroker.embedded(certificates: certificates)
defer { embedded.stop() }
let brokers = [mosquitto, embedded]
let tools = try MosquittoTools()

// MARK: Round trips

/// One measured series: a kind of round trip through one broker.
struct Series {
    let kind: String
    let broker: String
    let tripper: any RoundTripper
    var latencies: [Double] = []
    /// CPU seconds this process (both ends of the exchange; not the broker) spent in the rounds.
    var cpu = 0.0

    var median: Double { percentile(self.latencies, 0.5) }
    var p99: Double { percentile(self.latencies, 0.99) }
}

/// Measures Call → Return and the ping-pong through both brokers, a warm-up round and then `rounds`
/// rounds of each series in turn, and prints medians, p99 and ratios.
func roundTrips(tls: Bool) async throws {
    var series: [Series] = []
    for broker in brokers where onlyBroker ?? broker.name == broker.name {
        let transport = broker.transport(tls: tls, caFile: certificates.caFile)
        if onlyKind ?? "call" == "call" {
            series.append(
                Series(
                    kind: "Call → Return",
                    broker: broker.name,
                    tripper: try await CoatyRoundTripper(transport: transport)
                )
            )
        }
        if onlyKind ?? "ping" == "ping" {
            series.append(
                Series(
                    kind: "ping-pong",
                    broker: broker.name,
                    tripper: try await RawRoundTripper(transport: transport, name: "\(broker.name)-\(tls)")
                )
            )
        }
        if onlyKind ?? "subscribing" == "subscribing" {
            series.append(
                Series(
                    kind: "ping-pong, subscribing",
                    broker: broker.name,
                    tripper: try await RawRoundTripper(
                        transport: transport,
                        name: "\(broker.name)-\(tls)-subscribing",
                        shape: .subscribingPerRequest
                    )
                )
            )
        }
        if onlyKind ?? "ahead" == "ahead" {
            series.append(
                Series(
                    kind: "ping-pong, subscribed ahead",
                    broker: broker.name,
                    tripper: try await RawRoundTripper(
                        transport: transport,
                        name: "\(broker.name)-\(tls)-ahead",
                        shape: .subscribedAhead
                    )
                )
            )
        }
    }
    // The agents' own work on a round trip, without a broker or sockets: what a Call → Return adds
    // to the broker traffic it makes (the ping-pong subscribing per request) at the least.
    if onlyKind ?? "call" == "call", onlyBroker == nil {
        series.append(
            Series(
                kind: "Call → Return",
                broker: "in-process bus",
                tripper: try await CoatyRoundTripper(transport: InProcessTransport(bus: InProcessBus()))
            )
        )
    }
    for item in series { _ = try await item.tripper.measure(roundTripsPerRound) }
    for round in 0..<rounds {
        // Every other round runs the series in reverse, so that no series always follows the same
        // one (whose leftovers, such as a broker's deferred work, it would otherwise always meet).
        for index in round.isMultiple(of: 2) ? Array(series.indices) : series.indices.reversed() {
            let before = processCPUSeconds()
            series[index].latencies += try await series[index].tripper.measure(roundTripsPerRound)
            series[index].cpu += processCPUSeconds() - before
        }
    }
    for item in series { try await item.tripper.close() }

    let scheme = tls ? "mqtts://" : "mqtt://"
    say(
        "\nRound trips over \(scheme), \(rounds) × \(roundTripsPerRound) per series, alternated round by round, reversed every other round"
    )
    for item in series {
        let label = "\(item.kind) via \(item.broker)".padding(toLength: 44, withPad: " ", startingAt: 0)
        let cpu = item.cpu / Double(item.latencies.count) * 1e6
        say(
            "  \(label) median \(format(item.median * 1e6, 1)) µs   p99 \(format(item.p99 * 1e6, 1)) µs   CPU of both ends \(format(cpu, 1)) µs"
        )
    }
    func find(_ kind: String, _ broker: String) -> Series? { series.first { $0.kind == kind && $0.broker == broker } }
    guard let coatyMosquitto = find("Call → Return", "mosquitto"), let rawMosquitto = find("ping-pong", "mosquitto"),
        let coatyEmbedded = find("Call → Return", "embedded"), let rawEmbedded = find("ping-pong", "embedded"),
        let shapedMosquitto = find("ping-pong, subscribing", "mosquitto")
    else { return }
    say(
        "  Call → Return / ping-pong via mosquitto: median \(format(coatyMosquitto.median / rawMosquitto.median))×, p99 \(format(coatyMosquitto.p99 / rawMosquitto.p99))×   target ≤ 1.15×"
    )
    say(
        "  Call → Return / ping-pong subscribing per request, via mosquitto: median \(format(coatyMosquitto.median / shapedMosquitto.median))×, p99 \(format(coatyMosquitto.p99 / shapedMosquitto.p99))×"
    )
    // What a Call → Return would take if the agents' work and the broker traffic just added up.
    if let inProcess = find("Call → Return", "in-process bus") {
        for shape in ["subscribing", "subscribed ahead"] {
            guard let traffic = find("ping-pong, \(shape)", "mosquitto") else { continue }
            say(
                "  (ping-pong \(shape) + Call → Return in process) / ping-pong, via mosquitto: median \(format((traffic.median + inProcess.median) / rawMosquitto.median))×"
            )
        }
    }
    say(
        "  Call → Return via embedded / via mosquitto: median \(format(coatyEmbedded.median / coatyMosquitto.median))×, p99 \(format(coatyEmbedded.p99 / coatyMosquitto.p99))×   target ≤ 1.0×"
    )
    say(
        "  ping-pong via embedded / via mosquitto: median \(format(rawEmbedded.median / rawMosquitto.median))×, p99 \(format(rawEmbedded.p99 / rawMosquitto.p99))×"
    )
}

// MARK: Advertise burst

func burst() async throws {
    let burst = AdvertiseBurst(count: 20_000)
    say("\nAdvertise burst: \(burst.count) events, one agent → broker → another agent, best of 3 (alternated)")
    for broker in brokers {
        let transport = broker.transport(tls: false, caFile: certificates.caFile)
        let recorded = AdvertiseBurst.Recording()
        _ = try await burst.runAgents(transport: transport, recording: recorded)
        guard recorded.payloads.count > burst.count else {
            throw BenchmarkError("recorded \(recorded.payloads.count) of \(burst.count + 1) messages")
        }
        let inputFile = directory + "/burst-\(broker.name).txt"
        let lines = recorded.payloads.prefix(burst.count).map { $0 + [UInt8(ascii: "\n")] }.joined()
        _ = FileManager.default.createFile(atPath: inputFile, contents: Data(lines))
        var bestAgents = Double.infinity
        var bestTools = Double.infinity
        var fewestDelivered = Int.max
        for _ in 0..<3 {
            let (elapsed, delivered) = try await burst.runAgents(transport: transport)
            bestAgents = min(bestAgents, elapsed)
            fewestDelivered = min(fewestDelivered, delivered)
            bestTools = min(
                bestTools,
                try tools.throughput(
                    connection: broker.toolArguments(tls: false, caFile: certificates.caFile),
                    topic: recorded.topic,
                    qos: 0,
                    count: burst.count,
                    inputFile: inputFile
                )
            )
        }
        let bytes = recorded.payloads[0].count
        if fewestDelivered < burst.count, !broker.log.isEmpty {
            say("  \(broker.name) logged:\n\(broker.log.split(separator: "\n").suffix(5).joined(separator: "\n"))")
        }
        say(
            "  via \(broker.name): agents \(format(Double(burst.count) / bestAgents, 0)) events/s (fewest delivered in a run: \(fewestDelivered) of \(burst.count)); mosquitto_pub/sub \(format(Double(burst.count) / bestTools, 0)) msg/s for the same \(burst.count) messages of ~\(bytes) B; ratio \(format(bestTools / bestAgents))×"
        )
    }
}

// MARK: TLS throughput

func tlsThroughput() async throws {
    let count = 100_000
    let size = 100
    let topic = "bench/tls"
    let inputFile = directory + "/tls-input.txt"
    let payload = [UInt8](repeating: UInt8(ascii: "t"), count: size)
    _ = FileManager.default.createFile(
        atPath: inputFile,
        contents: Data(Array((0..<count).map { _ in payload + [10] }.joined()))
    )
    let messages = [TransportMessage(topic: topic + "/ours", payload: payload, qos: .atMostOnce)]
    var best: [String: Double] = [:]
    for run in 0..<3 {
        for broker in brokers {
            let tools = try tools.throughput(
                connection: broker.toolArguments(tls: true, caFile: certificates.caFile),
                topic: topic + "/c",
                qos: 0,
                count: count,
                inputFile: inputFile
            )
            best["C tools via \(broker.name)", default: .infinity] = min(
                best["C tools via \(broker.name)", default: .infinity],
                tools
            )
            let ours = try await clientThroughput(
                broker.transport(tls: true, caFile: certificates.caFile),
                topic: topic + "/ours",
                messages: messages,
                count: count,
                run: run
            )
            best["our client via \(broker.name)", default: .infinity] = min(
                best["our client via \(broker.name)", default: .infinity],
                ours
            )
        }
    }
    say(
        "\nQoS 0 throughput over mqtts://, \(count) messages of \(size) B, publisher → broker → subscriber, best of 3"
    )
    for (label, time) in best.sorted(by: { $0.key < $1.key }) {
        say("  \(label.padding(toLength: 26, withPad: " ", startingAt: 0)) \(format(Double(count) / time, 0)) msg/s")
    }
    let ratio = best["C tools via mosquitto"]! / best["our client via embedded"]!
    say("  our client and broker / mosquitto_pub/sub and mosquitto: \(format(ratio))×   target ≥ 1.0×")
}

say("AgentBenchmark: mosquitto and the embedded broker, each a child process on loopback")
if only == nil || only == "tcp" { try await roundTrips(tls: false) }
if only == nil || only == "burst" { try await burst() }
if only == nil || only == "tls-throughput" { try await tlsThroughput() }
if only == nil || only == "tls" { try await roundTrips(tls: true) }
