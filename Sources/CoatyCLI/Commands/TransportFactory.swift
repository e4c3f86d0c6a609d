import CoatyCommunication

/// Builds the transport a client subcommand connects with.
enum TransportFactory {
    static func make(_ options: ConnectionOptions) throws -> any Transport {
        throw CLIError("the MQTT transport is not available in this build")
    }
}
