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
            for round in 0..<rounds {
                client.noteExchange()
                try await server.write([UInt8(truncatingIfNeeded: round)])
                var answer: [UInt8] = []
                while answer.isEmpty { answer = try await server.read(maxBytes: 16) }
                #expect(answer == [UInt8(truncatingIfNeeded: round)])
            }
            let after = Self.sentSegments(client.handle.fd)
            answering.cancel()
            let inline = handled.load(ordering: .relaxed)
            let bareAcknowledgements = Int(after.all - before.all) - Int(after.data - before.data)
            #expect(after.data - before.data == UInt32(rounds))
            #expect(inline > 0)
            // A read the task handled may still be acknowledged on its own; one the thread handled not.
            #expect(bareAcknowledgements <= rounds - inline + 10)
        }

        @Test func aReadHandledWithoutAnAnswerIsAcknowledgedAtOnce() async throws {
            let pair = try await LoopbackPair.open()
            defer { pair.close() }
            let (client, server) = (pair.client, pair.server)
            client.noteExchange()
            let handled = Atomic<Int>(0)
            let (reads, read) = AsyncStream.makeStream(of: Void.self)
            // The client takes each message and answers nothing, as a caller takes a SUBACK. The handler
            // stops the reactor's thread after each read, so the task tells the test only once that
            // thread is done with it.
            let taking = Task {
                while true {
                    let outcome = try await client.read(maxBytes: 1_024, handlingUpTo: 2_048) { _ in
                        handled.add(1, ordering: .relaxed)
                        return false
                    }
                    if case .bytes(let bytes) = outcome, bytes.isEmpty { return }
                    read.yield()
                }
            }
            var iterator = reads.makeAsyncIterator()
            let before = Self.sentSegments(client.handle.fd)
            let rounds = 40
            for round in 0..<rounds {
                // Delayed-ACK mode, as after the client's last request: the kernel would hold the ACK
                // of the next read back for data to ride on.
                var off: Int32 = 0
                _ = setsockopt(
                    client.handle.fd,
                    Int32(IPPROTO_TCP),
                    TCP_QUICKACK,
                    &off,
                    socklen_t(MemoryLayout<Int32>.size)
                )
                // An exchange lasts 200 ms from the last publication; on a loaded machine the rounds may
                // take longer than that.
                client.noteExchange()
                try await server.write([UInt8(truncatingIfNeeded: round)])
                await iterator.next()
            }
            let after = Self.sentSegments(client.handle.fd)
            taking.cancel()
            let inline = handled.load(ordering: .relaxed)
            let bareAcknowledgements = Int(after.all - before.all) - Int(after.data - before.data)
            #expect(after.data == before.data)
            // Each message was acknowledged before the next was sent, not held back for data to ride
            // on; the reads the reactor's thread handled (`inline`) as well as those of the task. Held
            // back, every other one is (the kernel acknowledges two segments at once). A quarter is
            // left for rounds that outlast the exchange's 200 ms on a loaded machine.
            #expect(
                bareAcknowledgements >= rounds * 3 / 4,
                "\(inline) of \(rounds) reads handled on the reactor's thread"
            )
        }
    }
#endif
