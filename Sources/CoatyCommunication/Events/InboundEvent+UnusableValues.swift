import CoatyModel

extension CoatyTopic {
    /// What in a received topic a receiver cannot use as it stands, as sentences for a diagnostic: an
    /// empty source-id level (no agent has that id) or an empty correlation-id level (a response goes to
    /// an empty level, where coaty-js answers on a level `undefined`). coaty-js accepts both.
    var unusableValues: [String] {
        var values: [String] = []
        if self.sourceID.rawValue.isEmpty { values.append("the source id level is empty") }
        if let correlationID = self.correlationID, correlationID.rawValue.isEmpty {
            values.append("the correlation id level is empty; a response goes to an empty correlation level")
        }
        return values
    }
}

extension InboundEvent {
    /// What in the payload of this received event a receiver cannot use as it stands, as sentences for
    /// a diagnostic (its topic's are ``CoatyTopic/unusableValues``).
    ///
    /// coaty-js accepts such events, so they are delivered all the same (protocol notes §1.6, §2.3),
    /// and the manager reports each value as a ``CommunicationDiagnostic/Kind/unusableValue``, for the
    /// app to decide what to do with the event. Only a Discover's and a Return's payload can have them.
    var unusableValues: [String] {
        switch self {
        case .discover(let event): event.unusableValues
        case .return(let event): event.error?.unusableValues ?? []
        default: []
        }
    }
}
