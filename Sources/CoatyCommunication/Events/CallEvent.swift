public import CoatyModel

/// Call: invokes a remote operation; answered by ``ReturnEvent``s.
public struct CallEvent: Sendable {
    /// The operation name, the event filter of the topic (`CLL:<operation>`).
    public let operation: String
    /// The parameters: absent, a JSON array (by position) or a JSON object (by name).
    public let parameters: AnyCodable?
    /// The context filter: callees observing with a context object only receive the Call if the
    /// filter matches their context.
    public let filter: ContextFilter?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?
    var responseRoute: ResponseRoute?

    /// Creates a Call event.
    ///
    /// - Parameters:
    ///   - operation: The operation name, for example `"com.example.lights.switchLight"`.
    ///   - parameters: `nil`, an array (by position) or an object (by name).
    ///   - filter: A context filter for the callees.
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/invalidArgument`` if the
    ///   operation is not a valid event filter or the parameters are neither an array nor an object.
    public init(operation: String, parameters: AnyCodable? = nil, filter: ContextFilter? = nil) throws {
        try EventValidation.checkFilterName(operation, "operation")
        if let parameters, parameters.arrayValue == nil, parameters.objectValue == nil {
            throw CommunicationError(.invalidArgument, "Call parameters must be a JSON array or object")
        }
        self.operation = operation
        self.parameters = parameters
        self.filter = filter
    }

    /// Whether an observer with `context` receives this Call (protocol §5): a Call with a filter
    /// needs a match; a Call without a filter is not delivered to observers with a context.
    public func matches(context: CoatyObject?) -> Bool {
        guard let context else { return true }
        guard let filter = self.filter else { return false }
        return filter.matches(context)
    }

    /// The parameter at `index` of positional parameters.
    public func parameter(at index: Int) -> AnyCodable? { self.parameters?[index] }

    /// The parameter named `name` of by-name parameters.
    public func parameter(named name: String) -> AnyCodable? { self.parameters?[name] }

    /// Answers this received Call with a result. Enqueues the Return and returns without suspending.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/notRunning`` if this Call
    ///   was not received by a manager.
    public func returnResult(_ result: AnyCodable, executionInfo: AnyCodable? = nil) throws {
        try self.respond(.result(result, executionInfo: executionInfo))
    }

    /// Answers this received Call with an error. Enqueues the Return and returns without suspending.
    ///
    /// - Throws: ``CommunicationError`` with code ``CommunicationError/Code/notRunning`` if this Call
    ///   was not received by a manager.
    public func returnError(_ error: RemoteCallError, executionInfo: AnyCodable? = nil) throws {
        try self.respond(.error(error, executionInfo: executionInfo))
    }

    /// Answers this received Call with a Return event.
    public func respond(_ returnEvent: ReturnEvent) throws {
        guard let route = self.responseRoute else {
            throw CommunicationError(.notRunning, "this Call was not received by a communication manager")
        }
        try route.send(.return, try EventCoding.encode(returnEvent.payload))
    }

    struct Payload: WirePayload {
        var parameters: AnyCodable?
        var filter: ContextFilter?

        enum CodingKeys: String, CodingKey { case parameters, filter }

        init(parameters: AnyCodable?, filter: ContextFilter?) {
            self.parameters = parameters
            self.filter = filter
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if container.contains(.parameters) {
                let parameters = try container.decode(AnyCodable.self, forKey: .parameters)
                guard parameters.arrayValue != nil || parameters.objectValue != nil else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .parameters,
                        in: container,
                        debugDescription: "parameters must be an array or an object"
                    )
                }
                self.parameters = parameters
            }
            self.filter = container.contains(.filter) ? try container.decode(ContextFilter.self, forKey: .filter) : nil
        }

        /// Without a context filter (the usual Call): the parameters as parsed, if an array or object.
        static func decodeDirectly(_ tree: AnyCodable) -> Payload? {
            guard case .object(let members) = tree, members["filter"] == nil else { return nil }
            let parameters = members["parameters"]
            switch parameters {
            case nil, .array?, .object?: return Payload(parameters: parameters, filter: nil)
            default: return nil
            }
        }

        func encodeDirectly(with encoder: CoatyJSONEncoder) throws -> [UInt8]? {
            guard self.filter == nil else { return nil }
            return try encoder.encodeMembers(["parameters": self.parameters])
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(self.parameters, forKey: .parameters)
            try container.encodeIfPresent(self.filter, forKey: .filter)
        }
    }

    var payload: Payload { Payload(parameters: self.parameters, filter: self.filter) }

    init(operation: String, payload: Payload, origin: EventOrigin) {
        self.operation = operation
        self.parameters = payload.parameters
        self.filter = payload.filter
        self.origin = origin
    }
}

/// The error of a failed remote call, as carried by a ``ReturnEvent``.
///
/// Coaty specifies an integer `code` and a string `message`, but coaty-js accepts any JSON values there,
/// so a received error may carry others. It is delivered all the same (and reported as a diagnostic):
/// ``code`` is then 0 unless the value is an integer, ``message`` the value's JSON text unless it is a
/// string, and ``receivedError`` holds the `error` object as received, for the app to decide.
public struct RemoteCallError: Error, Sendable, Hashable {
    /// The error code. -32768 … -32000 are reserved; applications use codes outside that range.
    public var code: Int
    /// A human-readable message.
    public var message: String
    /// The `error` object as received, when its `code` is not an integer that fits in `Int` or its
    /// `message` is not a string; `nil` for an error of the specified form and one built here.
    public var receivedError: AnyCodable?

    /// Creates an error.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
        self.receivedError = nil
    }

    /// The error that a received `error` object with `code` and `message` of any JSON values stands for.
    init(receivedCode code: AnyCodable, message: AnyCodable, error: AnyCodable) {
        self.code = code.intValue ?? 0
        self.message = message.stringValue ?? message.jsonString
        if case .int = code, case .string = message {
            self.receivedError = nil
        } else {
            self.receivedError = error
        }
    }

    /// What in this received error cannot be used as it stands, for diagnostics.
    var unusableValues: [String] {
        guard let receivedError else { return [] }
        var values: [String] = []
        if case .int? = receivedError["code"] {
        } else {
            values.append(
                "the Return error's code \(receivedError["code"] ?? .null) is not an integer; delivered as code 0"
            )
        }
        if case .string? = receivedError["message"] {
        } else {
            values.append("the Return error's message is not a string; delivered as its JSON text")
        }
        return values
    }

    /// The predefined error -32602 "Invalid params".
    public static let invalidParameters = RemoteCallError(code: -32602, message: "Invalid params")
}

/// Return: the answer to a ``CallEvent``, with exactly one of a result and an error.
public struct ReturnEvent: Sendable {
    /// Exactly one of a result and an error.
    public enum Outcome: Sendable, Hashable {
        /// The operation's result (may be JSON `null`, for example for void operations).
        case result(AnyCodable)
        /// The operation failed.
        case error(RemoteCallError)
    }

    /// The result or error.
    public let outcome: Outcome
    /// Information about the execution, for example `{"duration": 12}`.
    public let executionInfo: AnyCodable?
    /// Where the event came from; `nil` for an event built locally.
    public internal(set) var origin: EventOrigin?

    /// Creates a Return event.
    public init(_ outcome: Outcome, executionInfo: AnyCodable? = nil) {
        self.outcome = outcome
        self.executionInfo = executionInfo
    }

    /// A Return with a result.
    public static func result(_ value: AnyCodable, executionInfo: AnyCodable? = nil) -> ReturnEvent {
        ReturnEvent(.result(value), executionInfo: executionInfo)
    }

    /// A Return with an error.
    public static func error(_ error: RemoteCallError, executionInfo: AnyCodable? = nil) -> ReturnEvent {
        ReturnEvent(.error(error), executionInfo: executionInfo)
    }

    /// The result, if the call succeeded.
    public var result: AnyCodable? {
        if case .result(let value) = self.outcome { return value }
        return nil
    }

    /// The error, if the call failed.
    public var error: RemoteCallError? {
        if case .error(let error) = self.outcome { return error }
        return nil
    }

    struct Payload: WirePayload {
        var outcome: Outcome
        var executionInfo: AnyCodable?

        enum CodingKeys: String, CodingKey { case result, error, executionInfo }
        enum ErrorKeys: String, CodingKey { case code, message }

        init(outcome: Outcome, executionInfo: AnyCodable?) {
            self.outcome = outcome
            self.executionInfo = executionInfo
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch (container.contains(.result), container.contains(.error)) {
            case (true, false):
                self.outcome = .result(try container.decode(AnyCodable.self, forKey: .result))
            case (false, true):
                // A JSON object with a code and a message of any JSON values, as coaty-js takes it.
                let error = try container.decode(AnyCodable.self, forKey: .error)
                guard case .object(let members) = error else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .error,
                        in: container,
                        debugDescription: "error must be a JSON object with a code and a message"
                    )
                }
                guard let code = members["code"], let message = members["message"] else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .error,
                        in: container,
                        debugDescription: "error must have a code and a message"
                    )
                }
                self.outcome = .error(RemoteCallError(receivedCode: code, message: message, error: error))
            default:
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "a Return needs exactly one of result and error")
                )
            }
            // Not a ternary: in `contains ? decode(AnyCodable) : nil` the `nil` literal becomes
            // `AnyCodable.null` (AnyCodable is nil-literal expressible), so an absent field would be sent as `null`.
            if container.contains(.executionInfo) {
                self.executionInfo = try container.decode(AnyCodable.self, forKey: .executionInfo)
            } else {
                self.executionInfo = nil
            }
        }

        /// A result (the usual Return): taken as parsed, with the execution info if present.
        static func decodeDirectly(_ tree: AnyCodable) -> Payload? {
            guard case .object(let members) = tree, members["error"] == nil, let result = members["result"] else {
                return nil
            }
            return Payload(outcome: .result(result), executionInfo: members["executionInfo"])
        }

        func encodeDirectly(with encoder: CoatyJSONEncoder) throws -> [UInt8]? {
            guard case .result(let value) = self.outcome else { return nil }
            return try encoder.encodeMembers(["result": value, "executionInfo": self.executionInfo])
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self.outcome {
            case .result(let value):
                try container.encode(value, forKey: .result)
            case .error(let error):
                var nested = container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
                try nested.encode(error.code, forKey: .code)
                try nested.encode(error.message, forKey: .message)
            }
            try container.encodeIfPresent(self.executionInfo, forKey: .executionInfo)
        }
    }

    var payload: Payload { Payload(outcome: self.outcome, executionInfo: self.executionInfo) }

    init(payload: Payload, origin: EventOrigin) {
        self.outcome = payload.outcome
        self.executionInfo = payload.executionInfo
        self.origin = origin
    }
}
