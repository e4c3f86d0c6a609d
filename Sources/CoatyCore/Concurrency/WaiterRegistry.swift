import Synchronization

/// Names one wait in a ``WaiterRegistry``: a plain value that a pure state machine can hold and
/// name in the actions it returns, while the registry holds the continuation.
package struct WaiterToken: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt64

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package var description: String { "waiter \(self.rawValue)" }
}

/// Tasks waiting for outcomes, each resumed exactly once: by ``resume(_:with:)``, by
/// ``resumeAll(with:)``, or by the waiting task's cancellation.
///
/// An outcome is success or an error; a waiter that needs a value reads it from the state whose
/// change resumed it. The registry is not generic on purpose: generic code called from another
/// module is not specialised, and resolving its type metadata at run time on every wait is a
/// cost the MQTT client would pay per message.
///
/// A token comes from ``makeToken()`` before the wait, so it can be handed to whoever will
/// resume it (a state machine, a queue) while no lock is held. The order of the two sides does
/// not matter: a resume that arrives before ``wait(_:onCancel:)`` is kept and returned at once,
/// and a resume after the wait ended (resumed before, or cancelled) finds nothing and returns
/// `false`. Each token is waited on once or given back with ``discard(_:)``: the registry keeps
/// an entry for every token until then.
package final class WaiterRegistry: Sendable {
    private enum Slot {
        case issued
        case waiting(UnsafeContinuation<Void, any Error>)
        case resolved(Result<Void, any Error>)
    }

    /// A table entry: the slot of the token it was last issued for, or `nil` while free.
    private struct Entry {
        /// Tells apart the tokens that reuse this entry: bumped each time it is freed.
        var generation: UInt32 = 0
        var slot: Slot?
    }

    /// The tokens whose wait has not ended, in a table indexed by the token's low 32 bits, so that the
    /// per-message waits of the MQTT client cost no hashing. A token's high 32 bits are the entry's
    /// generation when it was issued, so a token stays unique although entries are reused. The table
    /// keeps the size of the most tokens open at once; freed entries are reused, not released.
    private struct State {
        var entries: [Entry] = []
        var free: [Int] = []

        /// The entry a token names, whether or not it is still the token's.
        private static func index(of token: WaiterToken) -> Int {
            Int(truncatingIfNeeded: token.rawValue & 0xFFFF_FFFF)
        }

        func slot(_ token: WaiterToken) -> Slot? {
            let index = Self.index(of: token)
            guard index < self.entries.count, self.entries[index].generation == UInt32(token.rawValue >> 32) else {
                return nil
            }
            return self.entries[index].slot
        }

        /// Sets the slot of an issued token (whose entry is current).
        mutating func set(_ token: WaiterToken, _ slot: Slot) {
            self.entries[Self.index(of: token)].slot = slot
        }

        /// Ends an issued token: its entry is free for a later token.
        mutating func end(_ token: WaiterToken) {
            let index = Self.index(of: token)
            self.entries[index].slot = nil
            self.entries[index].generation &+= 1
            self.free.append(index)
        }

        mutating func issue() -> WaiterToken {
            let index: Int
            if let reused = self.free.popLast() {
                index = reused
            } else {
                index = self.entries.count
                self.entries.append(Entry())
            }
            self.entries[index].slot = .issued
            return self.token(at: index)
        }

        /// The token the entry at `index` is issued for now.
        func token(at index: Int) -> WaiterToken {
            WaiterToken(rawValue: UInt64(self.entries[index].generation) << 32 | UInt64(index))
        }
    }

    private let state: Mutex<State> = Mutex(State())

    package init() {}

    /// A new token, unique among the tokens of this registry whose wait has not ended.
    package func makeToken() -> WaiterToken {
        self.state.withLock { $0.issue() }
    }

    /// The number of tasks suspended in ``wait(_:onCancel:)`` now.
    package var count: Int {
        self.state.withLock { state in
            state.entries.reduce(0) { count, entry in
                if case .waiting = entry.slot { return count + 1 }
                return count
            }
        }
    }

    /// Suspends until `token` is resumed, or returns at once with a resume that came first.
    ///
    /// - Parameter onCancel: runs once if the task is cancelled before the token is resumed, so
    ///   the caller can withdraw whatever the token stands for; it runs outside the registry's lock.
    /// - Throws: the error the token was resumed with, or `CancellationError` if the task is
    ///   cancelled first (then a later resume of the token returns `false`); a
    ///   ``WaiterRegistryMisuse`` for a token that is not waitable (unknown, discarded, or
    ///   waited on already).
    package func wait(_ token: WaiterToken, onCancel: @Sendable () -> Void = {}) async throws {
        try await withTaskCancellationHandler {
            // Unsafe continuations: the table resumes each exactly once, as it hands a continuation out
            // only while taking it from its slot.
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let ready: (result: Result<Void, any Error>, isCancelled: Bool)? = self.state.withLock { state in
                    switch state.slot(token) {
                    case .resolved(let result):
                        state.end(token)
                        return (result, false)
                    case .issued where !Task.isCancelled:
                        state.set(token, .waiting(continuation))
                        return nil
                    case .issued:
                        state.end(token)
                        return (.failure(CancellationError()), true)
                    case .waiting, nil:
                        return (.failure(WaiterRegistryMisuse(token: token)), false)
                    }
                }
                if let ready {
                    if ready.isCancelled { onCancel() }
                    continuation.resume(with: ready.result)
                }
            }
        } onCancel: {
            let continuation = self.state.withLock { state -> UnsafeContinuation<Void, any Error>? in
                // Only a suspended wait is ended here; an outcome that arrived first wins, and a
                // wait not yet begun sees the cancellation itself.
                guard case .waiting(let continuation) = state.slot(token) else { return nil }
                state.end(token)
                return continuation
            }
            if let continuation {
                onCancel()
                continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Resumes the wait on `token` with `result`, or keeps `result` for a wait that has not
    /// begun yet.
    ///
    /// - Returns: `false` if the token's wait already ended (resumed before, or cancelled).
    @discardableResult
    package func resume(_ token: WaiterToken, with result: Result<Void, any Error>) -> Bool {
        let continuation = self.state.withLock { state -> UnsafeContinuation<Void, any Error>?? in
            switch state.slot(token) {
            case .waiting(let continuation):
                state.end(token)
                return .some(continuation)
            case .issued:
                state.set(token, .resolved(result))
                return .some(nil)
            case .resolved, nil:
                return nil
            }
        }
        guard let continuation else { return false }
        continuation?.resume(with: result)
        return true
    }

    /// Resumes the wait on `token` with success; see ``resume(_:with:)``.
    @discardableResult
    package func resume(_ token: WaiterToken) -> Bool {
        self.resume(token, with: .success(()))
    }

    /// Resumes the wait on `token` with `error`; see ``resume(_:with:)``.
    @discardableResult
    package func resume(_ token: WaiterToken, throwing error: any Error) -> Bool {
        self.resume(token, with: .failure(error))
    }

    /// Gives back a token that will not be waited on, dropping any outcome kept for it; a later
    /// resume of it returns `false`.
    package func discard(_ token: WaiterToken) {
        let continuation = self.state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            let slot = state.slot(token)
            if slot != nil { state.end(token) }
            if case .waiting(let continuation) = slot { return continuation }
            return nil
        }
        // A token discarded while its task waits: end the wait rather than leave it hanging.
        continuation?.resume(throwing: CancellationError())
    }

    /// Resumes every task waiting now with `result`. Results kept for waits that have not begun
    /// stay as they are.
    package func resumeAll(with result: Result<Void, any Error>) {
        let continuations = self.state.withLock { state -> [UnsafeContinuation<Void, any Error>] in
            var waiting: [UnsafeContinuation<Void, any Error>] = []
            for index in state.entries.indices {
                guard case .waiting(let continuation) = state.entries[index].slot else { continue }
                waiting.append(continuation)
                state.end(state.token(at: index))
            }
            return waiting
        }
        for continuation in continuations { continuation.resume(with: result) }
    }
}

/// A wait on a token its registry cannot wait on: never issued, discarded, or waited on already.
package struct WaiterRegistryMisuse: Error, CustomStringConvertible {
    package let token: WaiterToken

    package init(token: WaiterToken) { self.token = token }

    package var description: String { "\(self.token) cannot be waited on: unknown, discarded or waited on before" }
}
