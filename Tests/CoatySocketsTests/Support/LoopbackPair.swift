import CoatySockets

/// Both ends of a TCP connection over loopback, with the listener that accepted it: the client's end
/// opened as a client's (`TCPConnection.connect`), the server's as a broker's (`TCPListener.accept`).
struct LoopbackPair {
    let listener: TCPListener
    let client: TCPConnection
    let server: TCPConnection

    static func open() async throws -> LoopbackPair {
        let listener = try TCPListener.bind(port: 0)
        do {
            let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
            do {
                return LoopbackPair(listener: listener, client: client, server: try await listener.accept())
            } catch {
                client.close()
                throw error
            }
        } catch {
            listener.close()
            throw error
        }
    }

    /// Closes both ends and the listener. Idempotent.
    func close() {
        self.server.close()
        self.client.close()
        self.listener.close()
    }
}
