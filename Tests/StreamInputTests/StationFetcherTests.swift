import Foundation
import Testing

@testable import StreamInput

@Suite("StationFetcher against a loopback server", .serialized)
struct StationFetcherTests {
    @Test("a list is fetched whole, through redirects, and its relative entries resolve against its URL")
    func fetchesAList() async throws {
        try await StreamTestServer.with { server in
            let list = "#EXTM3U\n#EXTINF:-1,Local\nstream?x=1\nhttp://other.example/s\n"
            let doc =
                "/doc?type=audio/x-mpegurl&text=" + list.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = server.url(
                "/redirect?n=2&to=" + doc.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            let fetched = try StationFetcher.fetch(url: url, limits: testLimits())
            #expect(fetched.contentType == "audio/x-mpegurl")
            #expect(fetched.body == Array(list.utf8))
            let entries = StationList.parse(String(decoding: fetched.body, as: UTF8.self), base: url)
            #expect(
                entries == [
                    StationListEntry(url: server.url("/stream?x=1"), title: "Local"),
                    StationListEntry(url: "http://other.example/s"),
                ])
        }
    }

    @Test("a document too large fails, whether it says so or not")
    func tooLarge() async throws {
        try await StreamTestServer.with { server in
            var limits = testLimits()
            limits.maxDocumentBytes = 1000
            for framing in ["length", "close"] {
                let url = server.url("/doc?size=5000&framing=\(framing)")
                do throws(StreamInputError) {
                    _ = try StationFetcher.fetch(url: url, limits: limits)
                    Issue.record("\(url) was fetched")
                } catch {
                    #expect(error.description == "\(url): larger than 1000 bytes")
                }
            }
            let small = try StationFetcher.fetch(url: server.url("/doc?size=1000&framing=close"), limits: limits)
            #expect(small.body.count == 1000)
        }
    }

    @Test("failures name the URL and the reason")
    func failures() async throws {
        try await StreamTestServer.with { server in
            let cases = [
                (server.url("/status?code=404"), "HTTP 404 Not Found"),
                (server.url("/loop"), "too many redirects (more than 5)"),
                (server.url("/giant"), "response head too large (more than 16384 bytes)"),
                ("http://127.0.0.1:\(try closedPort())/x.m3u", "connection refused"),
                ("gopher://x/y", "not an http or https URL"),
            ]
            for (url, reason) in cases {
                do throws(StreamInputError) {
                    _ = try StationFetcher.fetch(url: url, limits: testLimits())
                    Issue.record("\(url) was fetched")
                } catch {
                    #expect(error.description == "\(url): \(reason)")
                }
            }
            var limits = testLimits()
            limits.connectSeconds = 0.3
            let start = ContinuousClock.now
            do throws(StreamInputError) {
                _ = try StationFetcher.fetch(url: server.url("/slowloris"), limits: limits)
                Issue.record("the slow loris was fetched")
            } catch {
                #expect(error.description == "\(server.url("/slowloris")): no response within 0.3 s")
            }
            #expect(ContinuousClock.now - start < .milliseconds(1500))
        }
    }
}
