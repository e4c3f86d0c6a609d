import CoatySockets
import CoatyTransport
import Synchronization

/// An in-memory byte stream for driving an `MQTTConnection` without a socket: the test feeds what the
/// broker sends, and holds the client's writes at a gate until it opens it, as a broker that stops
/// reading holds them.
final class ScriptedStream: ByteStreamConnection {
    private struct State {
        var inbound: [[UInt8]] = []
        var reader: CheckedContinuation<[UInt8], any Error>?
        var isGateOpen = false
        var gateWaiters: [CheckedContinuation<Void, any Error>] = []
        var written: [UInt8] = []
        var writtenWaiters:
            [(id: Int, until: @Sendable ([UInt8]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiterID = 0
        var isClosed = false
    }

    private let state = Mutex(State())
    private let writes: AsyncStream<Void>
    private let writeStarted: AsyncStream<Void>.Continuation

    init() {
        (self.writes, self.writeStarted) = AsyncStream.makeStream()
    }

    var remoteDescription: String { "scripted" }

    /// Everything written so far (writes held at the gate count once they pass it).
    var written: [UInt8] { self.state.withLock { $0.written } }

    /// Hands `bytes` to the next read.
    func feed(_ bytes: [UInt8]) {
        let reader: CheckedContinuation<[UInt8], any Error>? = self.state.withLock { state in
            guard let reader = state.reader else {
                state.inbound.append(bytes)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: bytes)
    }

    /// Returns once what has been written satisfies `condition`, or the task is cancelled (a suite's
    /// time limit), so that a write that never comes fails the test instead of hanging it.
    func waitUntilWritten(_ condition: @escaping @Sendable ([UInt8]) -> Bool) async {
        let id = self.state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = self.state.withLock { state in
                    if condition(state.written) || Task.isCancelled { return true }
                    state.writtenWaiters.append((id, condition, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                state.writtenWaiters.firstIndex { $0.id == id }.map { state.writtenWaiters.remove(at: $0) }
            }
            waiter?.continuation.resume()
        }
    }

    /// Returns once a write has reached the gate.
    func firstWriteStarted() async {
        var iterator = self.writes.makeAsyncIterator()
        _ = await iterator.next()
    }

    /// Lets held and later writes through.
    func openGate() {
        let waiters = self.state.withLock { state in
            state.isGateOpen = true
            defer { state.gateWaiters = [] }
            return state.gateWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func read(maxBytes: Int) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            let result: Result<[UInt8], any Error>? = self.state.withLock { state in
                if state.isClosed { return .failure(SocketError.closed("read")) }
                if !state.inbound.isEmpty { return .success(state.inbound.removeFirst()) }
                state.reader = continuation
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        self.writeStarted.yield()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, any Error>? = self.state.withLock { state in
                if state.isClosed { return .failure(SocketError.closed("write")) }
                if state.isGateOpen { return .success(()) }
                state.gateWaiters.append(continuation)
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
        let satisfied = try self.state.withLock { state in
            if state.isClosed { throw SocketError.closed("write") }
            state.written += bytes
            let written = state.written
            let satisfied = state.writtenWaiters.filter { $0.until(written) }.map(\.continuation)
            state.writtenWaiters.removeAll { $0.until(written) }
            return satisfied
        }
        for waiter in satisfied { waiter.resume() }
    }

    func write(contentsOf chunks: [[UInt8]]) async throws {
        try await self.write(chunks.flatMap { $0 })
    }

    func noteExchange() {}

    func shutdownOutput() async {}

    func close() {
        let (reader, waiters) = self.state.withLock { state in
            state.isClosed = true
            defer {
                state.reader = nil
                state.gateWaiters = []
            }
            return (state.reader, state.gateWaiters)
        }
        reader?.resume(throwing: SocketError.closed("read"))
        for waiter in waiters { waiter.resume(throwing: SocketError.closed("write")) }
    }

    var isClosed: Bool { self.state.withLock { $0.isClosed } }
}
