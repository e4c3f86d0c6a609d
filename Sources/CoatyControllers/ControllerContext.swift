public import CoatyCommunication
public import CoatyCore
public import CoatyModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a ``Controller`` gets from its ``Container``: the communication manager, the agent identity,
/// a logger, distributed logging, and a place to run long-lived work.
public struct ControllerContext: Sendable {
    /// The agent's communication manager.
    public let communication: CommunicationManager
    /// The controller's name, used as the `name` of its `Log` objects.
    public let controllerName: String
    /// The container's logger.
    public let logger: CoatyLogger
    let spawner: WorkSpawner

    /// The agent's identity.
    public var identity: Identity { self.communication.identity }

    /// Runs `work` as a child task of ``Container/run()`` until it returns, the handle is cancelled, or
    /// the container shuts down (before the stopping hooks run).
    ///
    /// Use it for observation loops: `context.spawn { for await event in stream { … } }`. Errors thrown
    /// by `work` are logged, not propagated. Returns without suspending.
    @discardableResult
    public func spawn(_ work: @escaping @Sendable () async throws -> Void) -> WorkHandle {
        self.spawner.spawn(name: self.controllerName, work)
    }

    // MARK: Distributed logging

    /// Advertises a `Log` object (distributed logging, as coaty-js controllers do): `name` is the
    /// controller name, `logDate` the current time in ISO 8601, `logHost` carries the process id.
    ///
    /// - Throws: `CommunicationError` if the Log object cannot be advertised.
    public func log(_ level: LogLevel, _ message: String, tags: [String] = [], labels: [String: AnyCodable]? = nil)
        throws
    {
        let log = Log(
            name: self.controllerName,
            logLevel: level,
            logMessage: message,
            logDate: Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date()),
            logTags: tags.isEmpty ? nil : tags,
            logLabels: labels,
            logHost: Log.LogHost(pid: Int(ProcessInfo.processInfo.processIdentifier)),
            parentObjectID: self.identity.objectID
        )
        try self.communication.publishWithoutWaiting(AdvertiseEvent(log))
    }

    /// Advertises a debug `Log` object. See ``log(_:_:tags:labels:)``.
    public func logDebug(_ message: String, tags: String...) throws { try self.log(.debug, message, tags: tags) }

    /// Advertises an info `Log` object. See ``log(_:_:tags:labels:)``.
    public func logInfo(_ message: String, tags: String...) throws { try self.log(.info, message, tags: tags) }

    /// Advertises a warning `Log` object. See ``log(_:_:tags:labels:)``.
    public func logWarning(_ message: String, tags: String...) throws { try self.log(.warning, message, tags: tags) }

    /// Advertises an error `Log` object. See ``log(_:_:tags:labels:)``.
    public func logError(_ message: String, tags: String...) throws { try self.log(.error, message, tags: tags) }

    /// Advertises a fatal `Log` object. See ``log(_:_:tags:labels:)``.
    public func logFatal(_ message: String, tags: String...) throws { try self.log(.fatal, message, tags: tags) }
}
