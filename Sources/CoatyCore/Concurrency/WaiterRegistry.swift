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
        case waiting(CheckedContinuation<Void, any Error>)
        case resolved(Result<Void, any Error>)
    }

    private struct State {
        var nextToken: UInt64 = 0
        /// An entry per token whose wait has not ended.
        var slots: [WaiterToken: Slot] = [:]
    }

    private let state: Mutex<State> = Mutex(State())

    package init() {}

    /// A new token, unique in this registry.
    package func makeToken() -> WaiterToken {
        self.state.withLock { state in
            state.nextToken += 1
            let token = WaiterToken(rawValue: state.nextToken)
            state.slots[token] = .issued
            return token
        }
    }

    /// The number of tasks suspended in ``wait(_:onCancel:)`` now.
    package var count: Int {
        self.state.withLock { state in
            state.slots.values.reduce(0) { count, slot in
                if case .waiting = slot { return count + 1 }
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
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: (result: Result<Void, any Error>, isCancelled: Bool)? = self.state.withLock { state in
                    switch state.slots[token] {
                    case .resolved(let result):
                        state.slots[token] = nil
                        return (result, false)
                    case .issued where !Task.isCancelled:
                        state.slots[token] = .waiting(continuation)
                        return nil
                    case .issued:
                        state.slots[token] = nil
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
            let continuation = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
                // Only a suspended wait is ended here; an outcome that arrived first wins, and a
                // wait not yet begun sees the cancellation itself.
                guard case .waiting(let continuation) = state.slots[token] else { return nil }
                state.slots[token] = nil
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
        let continuation = self.state.withLock { state -> CheckedContinuation<Void, any Error>?? in
            switch state.slots[token] {
            case .waiting(let continuation):
                state.slots[token] = nil
                return .some(continuation)
            case .issued:
                state.slots[token] = .resolved(result)
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
        let continuation = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
            defer { state.slots[token] = nil }
            if case .waiting(let continuation) = state.slots[token] { return continuation }
            return nil
        }
        // A token discarded while its task waits: end the wait rather than leave it hanging.
        continuation?.resume(throwing: CancellationError())
    }

    /// Resumes every task waiting now with `result`. Results kept for waits that have not begun
    /// stay as they are.
    package func resumeAll(with result: Result<Void, any Error>) {
        let continuations = self.state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            var waiting: [CheckedContinuation<Void, any Error>] = []
            for (token, slot) in state.slots {
                guard case .waiting(let continuation) = slot else { continue }
                waiting.append(continuation)
                state.slots[token] = nil
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
