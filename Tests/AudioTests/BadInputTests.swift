import Foundation
import Testing

@testable import Audio

@Suite("MP3Decoder on bad input")
struct BadInputTests {
    @Test(
        "refuses a file that is not a playable MP3 with a typed error naming it",
        arguments: [
            ("empty.mp3", "empty file"),
            ("random.mp3", "not an MP3 stream (no MPEG audio frames found)"),
            ("wav-named.mp3", "not an MP3 stream (it is a WAV file)"),
            (
                "id3-beyond-eof.mp3",
                "not an MP3 stream (its ID3v2 tag claims 209715210 bytes, more than the file's 17145)"
            ),
            ("no-such-file.mp3", "file not found"),
        ])
    func refusesAtOpen(_ name: String, _ reason: String) {
        let path = fixture(name)
        let error = #expect(throws: DecoderError.self) { try MP3Decoder(path: path) }
        #expect(error?.path == path)
        #expect(error?.reason == reason)
        #expect(error?.description == "\(path): \(reason)")
    }

    @Test func refusesADirectory() {
        let error = #expect(throws: DecoderError.self) { try MP3Decoder(path: fixturesDirectory.path) }
        #expect(error == .notARegularFile(path: fixturesDirectory.path))
    }

    @Test func refusesAnUnreadableFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("locked.mp3")
        try FileManager.default.copyItem(atPath: fixture("one-second.mp3"), toPath: path)
        chmod(path, 0)
        if getuid() == 0 {
            // root reads anything: the permission check must not misfire, and the file plays.
            #expect(try MP3Decoder(path: path).lengthFrames == 44100)
        } else {
            #expect(throws: DecoderError.permissionDenied(path: path)) { try MP3Decoder(path: path) }
        }
    }

    @Test("a truncated MP3 gives its valid part, exactly what mpg123 gives")
    func truncated() throws {
        let path = fixture("truncated.mp3")
        let pcm = try decodeAll(MP3Decoder(path: path))
        #expect(pcm.count / 4 == 71471)
        expectSamePCM(pcm, try referencePCM(path))
    }

    @Test("garbage in the middle: the valid part, then a typed error naming the file")
    func garbageInTheMiddle() throws {
        let path = fixture("garbage-middle.mp3")
        let decoder = try MP3Decoder(path: path)
        var pcm: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        let error = #expect(throws: DecoderError.self) {
            while true {
                let frames = try decoder.read(into: buffer)
                if frames == 0 { break }
                pcm += buffer[0..<frames * 4]
            }
        }
        guard case .corrupt(let errorPath, let reason) = error else {
            Issue.record("expected a corrupt-stream error, got \(String(describing: error))")
            return
        }
        #expect(errorPath == path)
        #expect(reason.contains("resync"))
        #expect(pcm.count / 4 == 65711)
        expectSamePCM(pcm, try referencePCM(path))
    }

    @Test("opening and decoding bad and good files many times leaks neither memory nor descriptors")
    func noLeaks() async throws {
        let names = [
            "random.mp3", "wav-named.mp3", "empty.mp3", "garbage-middle.mp3", "truncated.mp3", "one-second.mp3",
        ]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        func cycle() {
            for name in names {
                guard let decoder = try? MP3Decoder(path: fixture(name)) else { continue }
                _ = try? decoder.read(into: buffer)
            }
        }
        // Each cycle yields: the test takes seconds of system calls, and holding one of the test pool's
        // threads (two on two cores) that long stalls the real-time engine tests running beside it.
        let growth = leakGrowth(rounds: 120, cycle)
        // An open mpg123 handle holds about 60 KiB: leaking one per open would cost over 40 MiB here.
        #expect(growth.bytes < 16 << 20)
        // 720 opens: a descriptor leaked per open shows as hundreds. Other suites of this process (the
        // library's databases and watchers) open some meanwhile, so the bound leaves room for them.
        #expect(growth.descriptors < 200)
    }

    @Test func containerSniffing() {
        #expect(MP3Decoder.containerName(Array("RIFF\0\0\0\0WAVE".utf8)) == "a WAV file")
        #expect(MP3Decoder.containerName(Array("fLaC".utf8)) == "a FLAC file")
        #expect(MP3Decoder.containerName(Array("OggS".utf8)) == "an Ogg file")
        #expect(MP3Decoder.containerName(Array("ID3\u{4}".utf8)) == nil)
        #expect(MP3Decoder.id3v2TagSize([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 1, 0]) == 138)
        #expect(MP3Decoder.id3v2TagSize([0x49, 0x44, 0x33, 4, 0, 0, 0x80, 0, 1, 0]) == nil)
    }

}
