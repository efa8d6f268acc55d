import Foundation
import NIOSSL
import Testing

@testable import StreamInput

@Suite("https against a loopback TLS server", .serialized)
struct TLSTests {
    @Test("an untrusted certificate fails at once; once trusted, the same station plays through TLS")
    func https() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streaminput-tls-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = runProgram([
            "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext",
            "subjectAltName=DNS:localhost",
        ])
        try #require(made == 0, "openssl made a certificate")
        try await StreamTestServer.with(certificate: (cert, key)) { server in
            let port = try #require(server.tlsPort)
            let url = "https://localhost:\(port)/stream?metaint=1000&titles=Secure&rate=200000"

            let untrusted = Listener(url, limits: testLimits())
            defer { untrusted.stream.cancel() }
            try await untrusted.wait(until: { $0.isFailed })
            #expect(untrusted.failureMessage == "\(url): TLS: the server's certificate is not trusted")
            #expect(try #require(untrusted.timeToFailure) < .milliseconds(2000), "not retried for 4 s")

            TLS.replaceContext(with: try TLS.makeContext(trusting: [.file(cert)]))
            defer { TLS.replaceContext(with: nil) }
            let trusted = Listener(url, limits: testLimits(prebuffer: 2000))
            defer { trusted.stream.cancel() }
            try await trusted.read(until: { $0.stream.info.title == "Secure" && $0.segments[0].count >= 20000 })
            #expect(trusted.segments == [pattern(0..<trusted.segments[0].count)])
            #expect(trusted.stream.info.state == .playing)
            let start = ContinuousClock.now
            trusted.stream.cancel()
            #expect(ContinuousClock.now - start < .milliseconds(500), "no wait (of 5 s) for the server's close_notify")
            #expect(socketsConnected(toPort: port) == 0)
        }
    }
}
