import CoatyCommunication

/// A unit of application logic that a ``Container`` runs: it publishes and observes through the
/// container's `CommunicationManager`.
///
/// The container calls the hooks in this order: ``onInit(context:)`` for every controller in the
/// order given, ``onCommunicationManagerStarting()`` for every controller once the agent is online
/// for the first time, then on shutdown ``onCommunicationManagerStopping()`` (even if the agent never
/// came online) and finally ``onDispose()``, both in reverse order. Every hook has a default that does
/// nothing.
///
/// Controllers are application-level components whose operations are async, so an `actor` or a
/// `final class` with its state behind a `Mutex` fits. Long-lived observation loops belong in
/// ``ControllerContext/spawn(_:)``, which runs them as child tasks of ``Container/run()``.
public protocol Controller: Sendable {
    /// The controller's name: the `name` of the `Log` objects it advertises. Defaults to the type name.
    var name: String { get }

    /// Called once, before the agent connects. Keep the context to publish and observe later.
    ///
    /// Observations registered here are subscribed on connect, before the agent advertises its
    /// identity, so this agent misses nothing that others send once they have seen it join. Set them up
    /// here (with ``ControllerContext/spawn(_:)`` for the loops) when that matters.
    ///
    /// If it throws, the agent does not connect: the controllers initialised before this one get
    /// ``onDispose()`` (this one does not) and ``Container/run()`` rethrows.
    func onInit(context: ControllerContext) async throws

    /// Called once the agent is online for the first time, after its identity was advertised.
    func onCommunicationManagerStarting() async throws

    /// Called on shutdown, before the agent deadvertises its identity: while it is still online if it
    /// came online. It is called too when the agent never came online (it could not connect, or an
    /// ``onCommunicationManagerStarting()`` hook threw), so that a controller can always undo what
    /// ``onInit(context:)`` set up; what it publishes then is not sent.
    func onCommunicationManagerStopping() async

    /// Called last, after the agent has left.
    func onDispose() async
}

extension Controller {
    /// The type name, for example `"LightController"`.
    public var name: String { String(describing: Self.self) }

    /// Does nothing.
    public func onInit(context: ControllerContext) async throws {}

    /// Does nothing.
    public func onCommunicationManagerStarting() async throws {}

    /// Does nothing.
    public func onCommunicationManagerStopping() async {}

    /// Does nothing.
    public func onDispose() async {}
}
