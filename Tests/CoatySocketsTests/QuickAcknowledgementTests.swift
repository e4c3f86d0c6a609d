import Synchronization
import Testing

@testable import CoatySockets

#if os(Linux)
    import Glibc

    /// During an exchange, a connection we opened asks the kernel to acknowledge what it reads at once,
    /// so a peer that sends with Nagle's algorithm never waits for a delayed ACK. When the reactor's
    /// thread handles a read and the handler answers on the same connection, the answer carries that
    /// ACK: the connection asks only after the handling, and only if nothing was sent meanwhile.
    @Suite(.serialized, .timeLimit(.minutes(1)))
    struct QuickAcknowledgementTests {
        /// The segments a socket sent, and how many of them carried data (`TCP_INFO`'s `tcpi_segs_out`
        /// and `tcpi_data_segs_out`, at their offsets in Linux's `struct tcp_info` since 4.6).
        static func sentSegments(_ fd: Int32) -> (all: UInt32, data: UInt32) {
            var info = [UInt8](repeating: 0, count: 256)
            var length = socklen_t(info.count)
            let result = info.withUnsafeMutableBytes {
                getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length)
            }
            guard result == 0, length >= 160 else { return (0, 0) }
            func word(at offset: Int) -> UInt32 {
                info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            }
            return (word(at: 136), word(at: 156))
        }

        @Test func anAnswerSentWhileHandlingAReadCarriesItsAcknowledgement() async throws {
            let pair = try await LoopbackPair.open()
            defer { pair.close() }
            let (client, server) = (pair.client, pair.server)
            client.noteExchange()
            let handled = Atomic<Int>(0)
            // The client answers each ping as a callee answers a Call: on the reactor's thread when it
            // handles the read, else in the task.
            let answering = Task {
                while true {
                    let outcome = try await client.read(maxBytes: 1_024, handlingUpTo: 2_048) { ping in
                        handled.add(1, ordering: .relaxed)
                        _ = client.sendWithoutWaiting(Array(ping))
                        return true
                    }
                    guard case .bytes(let ping) = outcome else { continue }
                    if ping.isEmpty { return }
                    try await client.write(ping)
                }
            }
            let before = Self.sentSegments(client.handle.fd)
            let rounds = 100
            // Rounds slow enough for the kernel's delayed-ACK timer (40 ms at the least) to fire before
            // the answer: on a loaded machine it sends a bare ACK whatever the connection asks.
            var slowRounds = 0
            for round in 0..<rounds {
                let start = ContinuousClock.now
                client.noteExchange()
                try await server.write([UInt8(truncatingIfNeeded: round)])
                var answer: [UInt8] = []
                while answer.isEmpty { answer = try await server.read(maxBytes: 16) }
                #expect(answer == [UInt8(truncatingIfNeeded: round)])
                if ContinuousClock.now - start > .milliseconds(10) { slowRounds += 1 }
            }
            let after = Self.sentSegments(client.handle.fd)
            answering.cancel()
            let inline = handled.load(ordering: .relaxed)
            let bareAcknowledgements = Int(after.all - before.all) - Int(after.data - before.data)
            #expect(after.data - before.data >= UInt32(rounds))
            // A read the task handled may still be acknowledged on its own; one the thread handled not.
            // (On a loaded machine the task may take most reads; alone, the thread takes nearly all, and
            // asking for the ACK before the handling sent one bare ACK per read.)
            #expect(
                bareAcknowledgements <= rounds - inline + slowRounds + 10,
                "\(inline) of \(rounds) reads handled on the thread, \(slowRounds) rounds slower than 10 ms"
            )
        }
    }
#endif
