import Audio
import Testing

@Suite struct VolumeMappingTests {
    /// Ranges as cards report them: a codec's 64 dB, a USB DAC's 51.5 dB, a 24 dB (linear) one, one
    /// whose bottom step mutes, a small raw range and pulse's raw 0...65536.
    static let ranges: [VolumeMapping] = [
        .decibels(minimum: -6400, maximum: 0), .decibels(minimum: -5150, maximum: 0),
        .decibels(minimum: -2400, maximum: 0), .decibels(minimum: VolumeMapping.muteDB, maximum: 600),
        .raw(minimum: 0, maximum: 31), .raw(minimum: 0, maximum: 65536),
    ]

    @Test(arguments: ranges)
    func theEndsReadZeroAndHundred(_ mapping: VolumeMapping) {
        #expect(mapping.percent(mapping.value(percent: 0)) == 0)
        #expect(mapping.percent(mapping.value(percent: 100)) == 100)
        switch mapping {
        case .decibels(let minimum, let maximum), .raw(let minimum, let maximum):
            #expect(mapping.value(percent: 0) == minimum)
            #expect(mapping.value(percent: 100) == maximum)
            #expect(mapping.percent(minimum) == 0)
            #expect(mapping.percent(maximum) == 100)
        }
    }

    @Test(arguments: ranges)
    func settingReadsBackStably(_ mapping: VolumeMapping) {
        let fine: Bool
        if case .raw(0, 31) = mapping { fine = false } else { fine = true }
        for percent in 0...100 {
            let value = mapping.value(percent: percent)
            let read = mapping.percent(value)
            if fine {
                #expect(read == percent, "\(mapping): set \(percent), read \(read)")
            } else {
                // 32 steps cannot show every percent: the nearest one, and setting what was read
                // changes nothing.
                #expect(abs(read - percent) <= 2, "\(mapping): set \(percent), read \(read)")
                #expect(mapping.value(percent: read) == value, "\(mapping): set \(percent) drifts")
            }
        }
    }

    @Test(arguments: ranges)
    func louderIsNeverLower(_ mapping: VolumeMapping) {
        let values = (0...100).map { mapping.value(percent: $0) }
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// alsamixer's figures (volume_mapping.c, computed by hand): wide ranges follow the cubic-ish curve.
    @Test(arguments: [
        (VolumeMapping.decibels(minimum: -6400, maximum: 0), 50, -1592),
        (.decibels(minimum: -6400, maximum: 0), 25, -3016),
        (.decibels(minimum: -5150, maximum: 0), 50, -1468),
        (.decibels(minimum: -5150, maximum: 0), 25, -2707),
        (.decibels(minimum: -2400, maximum: 0), 50, -1200),
        (.raw(minimum: 0, maximum: 65536), 40, 26214),
    ])
    func alsamixersCurve(_ mapping: VolumeMapping, percent: Int, value: Int) {
        #expect(mapping.value(percent: percent) == value)
        #expect(mapping.percent(value) == percent)
    }

    @Test func aControlWithoutDecibelsIsRaw() {
        #expect(
            VolumeMapping.forControl(decibels: nil, raw: (0, 65536)) == .raw(minimum: 0, maximum: 65536))
        #expect(VolumeMapping.forControl(decibels: (0, 0), raw: (0, 31)) == .raw(minimum: 0, maximum: 31))
        #expect(
            VolumeMapping.forControl(decibels: (-6400, 0), raw: (0, 87)) == .decibels(minimum: -6400, maximum: 0))
    }
}
