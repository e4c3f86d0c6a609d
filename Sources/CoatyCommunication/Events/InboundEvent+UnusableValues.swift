import CoatyModel

extension EventOrigin {
    /// What in the topic a receiver cannot use as it stands, as sentences for a diagnostic: an empty
    /// source-id level (no agent has that id) or an empty correlation-id level (a response goes to an
    /// empty level, where coaty-js answers on a level `undefined`). coaty-js accepts both.
    var unusableValues: [String] {
        var values: [String] = []
        if let sourceID = self.sourceID, sourceID.rawValue.isEmpty { values.append("the source id level is empty") }
        if let correlationID = self.correlationID, correlationID.rawValue.isEmpty {
            values.append("the correlation id level is empty; a response goes to an empty correlation level")
        }
        return values
    }
}

extension InboundEvent {
    /// What in this received event a receiver cannot use as it stands, as sentences for a diagnostic.
    ///
    /// coaty-js accepts such events, so they are delivered all the same (protocol notes §1.6, §2.3),
    /// and the manager reports each value as a ``CommunicationDiagnostic/Kind/unusableValue``, for the
    /// app to decide what to do with the event.
    var unusableValues: [String] {
        switch self {
        case .discover(let event):
            return (event.origin?.unusableValues ?? []) + event.unusableValues
        case .return(let event):
            return (event.origin?.unusableValues ?? []) + (event.error?.unusableValues ?? [])
        case .advertise(let event): return event.origin?.unusableValues ?? []
        case .deadvertise(let event): return event.origin?.unusableValues ?? []
        case .channel(let event): return event.origin?.unusableValues ?? []
        case .resolve(let event): return event.origin?.unusableValues ?? []
        case .query(let event): return event.origin?.unusableValues ?? []
        case .retrieve(let event): return event.origin?.unusableValues ?? []
        case .update(let event): return event.origin?.unusableValues ?? []
        case .complete(let event): return event.origin?.unusableValues ?? []
        case .call(let event): return event.origin?.unusableValues ?? []
        case .associate(let event): return event.origin?.unusableValues ?? []
        }
    }
}
