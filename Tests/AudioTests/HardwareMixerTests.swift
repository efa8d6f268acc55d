import Audio
import Foundation
import PulseTestSupport
import Testing

/// The real mixer path: alsa-lib's `pulse` ctl plugin against a private pulseaudio's null sink.
/// PULSE_SERVER is set in this process for the plugin (the tests run one at a time).
@Suite(.serialized) struct HardwareMixerTests {
    func withPulse(_ body: (PulseServer) throws -> Void) throws {
        let server = try PulseServer()
        defer {
            unsetenv("PULSE_SERVER")
            server.stop()
        }
        setenv("PULSE_SERVER", server.address, 1)
        try body(server)
    }

    @Test func ctlDeviceOfPCMNames() {
        #expect(HardwareMixer.ctlDevice(forPCM: "hw:1,0") == "hw:1")
        #expect(HardwareMixer.ctlDevice(forPCM: "plughw:1,0") == "hw:1")
        #expect(HardwareMixer.ctlDevice(forPCM: "hw:0") == "hw:0")
        #expect(HardwareMixer.ctlDevice(forPCM: "hw:CARD=PCH,DEV=0") == "hw:CARD=PCH")
        #expect(HardwareMixer.ctlDevice(forPCM: "default") == "default")
        #expect(HardwareMixer.ctlDevice(forPCM: "pulse") == "pulse")
    }

    @Test func pcmFallsBackToMasterAndAMissingControlIsNamed() throws {
        try withPulse { _ in
            let mixer = try HardwareMixer(device: "pulse", control: nil)
            #expect(mixer.control == "Master")
            mixer.close()
            #expect(throws: HardwareMixerError.self) { try HardwareMixer(device: "pulse", control: "PCM") }
            do {
                _ = try HardwareMixer(device: "pulse", control: "Headphone")
                Issue.record("opened a missing control")
            } catch {
                #expect("\(error)".contains("\"pulse\""), "\(error)")
                #expect("\(error)".contains("\"Headphone\""), "\(error)")
                #expect("\(error)".contains("\"Master\""), "\(error)")
            }
        }
    }

    @Test func aMissingDeviceIsAnOpenError() {
        #expect(throws: HardwareMixerError.self) { try HardwareMixer(device: "hw:77", control: nil) }
    }

    @Test func setVolumeMovesTheSinkAndReadsBack() throws {
        try withPulse { server in
            let mixer = try HardwareMixer(device: "pulse", control: nil)
            defer { mixer.close() }
            for percent in [40, 37, 100, 0, 73] {
                try mixer.setVolume(percent)
                #expect(mixer.volume() == percent)
                let sink = try #require(try server.sinkPercent())
                #expect(abs(sink - percent) <= 1, "set \(percent), sink \(sink)")
            }
        }
    }

    @Test func anExternalChangeIsReported() throws {
        try withPulse { server in
            let mixer = try HardwareMixer(device: "pulse", control: nil)
            defer { mixer.close() }
            try mixer.setVolume(60)
            let reports = Reports()
            let watching = mixer.startWatching(onChange: { reports.append($0) }, onLost: { _ in })
            #expect(watching)
            try mixer.setVolume(55)  // our own set: not reported
            let started = Date()
            _ = try server.pactl("set-sink-volume", "@DEFAULT_SINK@", "25%")
            while reports.values.last != 25, Date().timeIntervalSince(started) < 1 { usleep(10_000) }
            #expect(reports.values.last == 25, "\(reports.values)")
            #expect(!reports.values.contains(55), "\(reports.values)")
            #expect(mixer.volume() == 25)
        }
    }
}

extension HardwareMixerTests {
    @Test func aServerThatGoesAwayIsReportedLostOnce() throws {
        let server = try PulseServer()
        defer {
            unsetenv("PULSE_SERVER")
            server.stop()
        }
        setenv("PULSE_SERVER", server.address, 1)
        let mixer = try HardwareMixer(device: "pulse", control: nil)
        defer { mixer.close() }
        let losses = Losses()
        let watching = mixer.startWatching(onChange: { _ in }, onLost: { losses.append($0) })
        #expect(watching)
        server.stop()
        let started = Date()
        while losses.values.isEmpty, Date().timeIntervalSince(started) < 5 { usleep(10_000) }
        usleep(200_000)
        #expect(losses.values.count == 1, "\(losses.values)")
        #expect(throws: HardwareMixerError.self) { try mixer.setVolume(10) }
    }
}

final class Losses: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ value: String) { lock.withLock { list.append(value) } }
    var values: [String] { lock.withLock { list } }
}

final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int] = []
    func append(_ value: Int) { lock.withLock { list.append(value) } }
    var values: [Int] { lock.withLock { list } }
}
