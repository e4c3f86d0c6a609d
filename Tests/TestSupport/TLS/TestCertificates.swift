import Foundation

/// Certificates made for a test run with the `openssl` command, in a temporary folder: a CA, and
/// server, client, expired, other-host and self-signed certificates with their keys (P-256, PEM).
///
/// The server and expired certificates name `localhost` and `127.0.0.1` in their subject alternative
/// names; the other-host one names only `other.example`; the self-signed one names `localhost` and
/// `127.0.0.1` but is signed by its own key. Make one set per suite with ``make()`` and remove it with
/// ``remove()``.
package struct TestCertificates: Sendable {
    /// The folder holding the files.
    package let directory: String

    /// Where the `openssl` command is, if installed.
    package static let opensslPath: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether `openssl` and OpenSSL 3's libssl are both there.
    package static var isAvailable: Bool {
        Self.opensslPath != nil
            && [
                "/usr/lib/x86_64-linux-gnu/libssl.so.3", "/usr/lib/aarch64-linux-gnu/libssl.so.3",
                "/usr/lib/libssl.so.3",
            ]
            .contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// The path of `name` in ``directory``.
    package func path(_ name: String) -> String { self.directory + "/" + name }

    /// The CA certificate that signed the server, client, expired and other-host certificates.
    package var caFile: String { self.path("ca.pem") }

    /// Makes the certificates.
    ///
    /// - Throws: ``ChildProcessError`` or ``TestCertificatesError`` when `openssl` fails.
    package static func make() async throws -> TestCertificates {
        guard let openssl = Self.opensslPath else { throw TestCertificatesError("openssl is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-tls-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        func run(_ arguments: [String]) async throws {
            let result = try await runProcess(openssl, arguments)
            guard result.status == 0 else {
                throw TestCertificatesError("openssl \(arguments.joined(separator: " ")) failed: \(result.errorOutput)")
            }
        }
        try await run(
            ["req", "-x509"] + key + [
                "-keyout", certificates.path("ca.key"), "-out", certificates.caFile, "-days", "30",
                "-subj", "/CN=Coaty Test CA",
            ]
        )
        /// A certificate signed by the CA, valid for `days` days (negative: expired).
        func signed(_ name: String, subject: String, extensions: String, days: Int) async throws {
            let extensionFile = certificates.path("\(name).ext")
            try extensions.write(toFile: extensionFile, atomically: true, encoding: .utf8)
            try await run(
                ["req"] + key + [
                    "-keyout", certificates.path("\(name).key"), "-out", certificates.path("\(name).csr"), "-subj",
                    subject,
                ]
            )
            try await run([
                "x509", "-req", "-in", certificates.path("\(name).csr"), "-CA", certificates.caFile, "-CAkey",
                certificates.path("ca.key"), "-CAcreateserial", "-out", certificates.path("\(name).pem"), "-days",
                String(days), "-extfile", extensionFile,
            ])
        }
        let serverNames = "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        try await signed("server", subject: "/CN=localhost", extensions: serverNames, days: 30)
        try await signed("expired", subject: "/CN=localhost", extensions: serverNames, days: -1)
        try await signed(
            "other-host",
            subject: "/CN=other.example",
            extensions: "subjectAltName=DNS:other.example\n",
            days: 30
        )
        try await signed(
            "client",
            subject: "/CN=coaty-test-client",
            extensions: "extendedKeyUsage=clientAuth\n",
            days: 30
        )
        try await run(
            ["req", "-x509"] + key + [
                "-keyout", certificates.path("self-signed.key"), "-out", certificates.path("self-signed.pem"), "-days",
                "30", "-subj", "/CN=localhost", "-addext", serverNames.trimmingCharacters(in: .newlines),
            ]
        )
        // mosquitto started as root drops to its own user before it reads the key files: let it read
        // them (they are throw-away test keys).
        for name in ["server", "expired", "other-host", "client", "self-signed"] {
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o644],
                ofItemAtPath: certificates.path("\(name).key")
            )
        }
        return certificates
    }

    /// Deletes the folder.
    package func remove() {
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}

/// Why ``TestCertificates`` could not be made.
package struct TestCertificatesError: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String

    /// Creates an error.
    package init(_ description: String) { self.description = description }
}
