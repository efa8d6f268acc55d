import Audio
import PlayerCore
import Testing

@Suite struct ReplayGainModeTests {
    @Test(arguments: [
        (ReplayGainMode.off, false, ReplayGain.Source.off), (.off, true, .off),
        (.track, false, .track), (.track, true, .track),
        (.album, false, .album), (.album, true, .album),
        (.auto, false, .album), (.auto, true, .track),
    ])
    func autoFollowsRandom(mode: ReplayGainMode, random: Bool, expected: ReplayGain.Source) {
        var queue = Queue()
        queue.random = random
        var context = PlayerContext(queue: queue)
        context.replayGainMode = mode
        context.replayGainSettings = ReplayGain(source: .off, preampDB: 3)
        #expect(context.resolvedReplayGain.source == expected)
        #expect(context.resolvedReplayGain.preampDB == 3)
    }
}
