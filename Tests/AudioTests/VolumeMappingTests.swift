import Audio
import Testing

@Suite struct VolumeMappingTests {
    struct DBRange: Sendable, CustomStringConvertible {
        let min: Int
        let max: Int
        var description: String { "\(min)..\(max) dB×100" }
    }

    static let dBRanges = [
        DBRange(min: -6400, max: 0), DBRange(min: -5150, max: 0), DBRange(min: -1200, max: 0),
        DBRange(min: -10350, max: 2400),
    ]

    @Test(arguments: dBRanges) func dBRoundTripsEveryPercent(range: DBRange) {
        for percent in 0...100 {
            let dB = VolumeMapping.dB(percent: percent, min: range.min, max: range.max)
            #expect((range.min...range.max).contains(dB))
            #expect(VolumeMapping.percent(dB: dB, min: range.min, max: range.max) == percent, "\(percent)%")
        }
    }

    @Test(arguments: dBRanges) func dBEndsAndOrder(range: DBRange) {
        #expect(VolumeMapping.dB(percent: 0, min: range.min, max: range.max) == range.min)
        #expect(VolumeMapping.dB(percent: 100, min: range.min, max: range.max) == range.max)
        #expect(VolumeMapping.percent(dB: range.min, min: range.min, max: range.max) == 0)
        #expect(VolumeMapping.percent(dB: range.max, min: range.min, max: range.max) == 100)
        var previous = Int.min
        for percent in 0...100 {
            let dB = VolumeMapping.dB(percent: percent, min: range.min, max: range.max)
            #expect(dB >= previous)
            previous = dB
        }
    }

    @Test func wideRangesAreExponentialNarrowOnesLinear() {
        // alsamixer's mapping: 50 % of a 64 dB range is 6000·log10(0.5·(1 − m) + m) with
        // m = 10^(−64/60), about −15.9 dB, not the linear −32 dB; a 12 dB range is linear.
        let wide = VolumeMapping.dB(percent: 50, min: -6400, max: 0)
        #expect((-1600)...(-1585) ~= wide, "\(wide)")
        #expect(VolumeMapping.dB(percent: 50, min: -1200, max: 0) == -600)
        #expect(VolumeMapping.dB(percent: 25, min: -1200, max: 0) == -900)
        // exactly 24 dB is still linear
        #expect(VolumeMapping.dB(percent: 50, min: -2400, max: 0) == -1200)
    }

    @Test(arguments: [(0, 31), (0, 65536), (0, 255)]) func rawRoundTrips(min: Int, max: Int) {
        for percent in 0...100 {
            let raw = VolumeMapping.raw(percent: percent, min: min, max: max)
            let back = VolumeMapping.percent(raw: raw, min: min, max: max)
            // a coarse control cannot hold every percent: the value read is within one step, and
            // setting it again lands on the same step
            let step = Double(100) / Double(max - min)
            #expect(Double(abs(back - percent)) <= step / 2 + 0.5, "\(percent)% → \(raw) → \(back)%")
            #expect(VolumeMapping.raw(percent: back, min: min, max: max) == raw)
            if max - min >= 100 { #expect(back == percent) }
        }
        #expect(VolumeMapping.raw(percent: 0, min: min, max: max) == min)
        #expect(VolumeMapping.raw(percent: 100, min: min, max: max) == max)
        #expect(VolumeMapping.raw(percent: 40, min: 0, max: 65536) == 26214)
    }

    @Test func outOfRangeValuesAreClamped() {
        #expect(VolumeMapping.percent(dB: 500, min: -6400, max: 0) == 100)
        #expect(VolumeMapping.percent(dB: -9000, min: -6400, max: 0) == 0)
        #expect(VolumeMapping.raw(percent: 140, min: 0, max: 31) == 31)
        #expect(VolumeMapping.percent(raw: 5, min: 3, max: 3) == 0)
    }
}
