import CoatyCore
public import CoatyModel

/// Handlers: answering requests synchronously, on the receive path.
///
/// An `observe…` stream hands each event to a consuming task, which the delivering thread has to wake.
/// A handler is called right where the event is decoded instead, so a responder that answers at once
/// (a lookup, a computation, a lock-protected state read) saves that wake-up and the consumer's
/// task. Over the in-process transport a whole Call → Return round trip then runs without a single
/// task switch (see Docs/Benchmarks.md).
///
/// A handler must not block and should be quick: it runs on the transport's receive path (for MQTT
/// over TCP or TLS, usually the process's one socket thread, the reactor), so inbound traffic, of
/// every connection of the process, waits while it runs. It may be called concurrently
/// for events arriving through different paths, and it must do any asynchronous work elsewhere, for
/// example by observing the stream instead. An error it throws is logged with the event's topic.
extension CommunicationManager {
    /// Calls `handler` for every Call of an operation, with the same matching as
    /// ``observeCall(_:context:)``; answer with ``CallEvent/returnResult(_:executionInfo:)`` or
    /// ``CallEvent/returnError(_:executionInfo:)`` from inside the handler.
    ///
    /// Returns once the subscription is in place. The handler is called until the registration is
    /// cancelled or ``run()`` returns.
    ///
    /// ```swift
    /// let greeter = try await manager.handleCalls("com.example.greet") { call in
    ///     try call.returnResult(.string("Hello, \(call.parameter(named: "name")?.stringValue ?? "you")!"))
    /// }
    /// ```
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   operation is not a valid event filter.
    public func handleCalls(
        _ operation: String,
        context: CoatyObject? = nil,
        _ handler: @escaping @Sendable (CallEvent) throws -> Void
    ) async throws -> EventHandlerRegistration {
        await self.handle(try self.callRoute(operation, context: context), handler)
    }

    /// Calls `handler` for every Discover; answer with ``DiscoverEvent/resolve(_:)`` from inside it.
    /// Returns once the subscription is in place.
    public func handleDiscover(
        _ handler: @escaping @Sendable (DiscoverEvent) throws -> Void
    ) async -> EventHandlerRegistration {
        await self.handle(self.discoverRoute(), handler)
    }

    /// Calls `handler` for every Query; answer with ``QueryEvent/retrieve(_:)`` from inside it.
    /// Returns once the subscription is in place.
    public func handleQuery(
        _ handler: @escaping @Sendable (QueryEvent) throws -> Void
    ) async -> EventHandlerRegistration {
        await self.handle(self.queryRoute(), handler)
    }

    private func handle<Event: Sendable>(
        _ route: EventRoute<Event>,
        _ handler: @escaping @Sendable (Event) throws -> Void
    ) async -> EventHandlerRegistration {
        let select = route.select
        let registration = EventHandlerRegistration()
        let logger = self.configuration.logger
        let receiver = ObserverReceiver(
            deliver: { delivery in
                guard let event = select(delivery), registration.isActive else { return }
                do {
                    try handler(event)
                } catch {
                    logger.error("event handler failed: \(error)", metadata: ["topic": delivery.topic])
                }
            },
            finish: { registration.end() }
        )
        let (ids, toSubscribe) = self.addObservers(filters: [route.filter], kind: .coaty, receiver: receiver)
        registration.setRelease { [weak self] in self?.removeObservers(ids) }
        await self.subscribe(toSubscribe)
        await self.waitForPendingSubscriptions(of: [route.filter])
        return registration
    }
}
