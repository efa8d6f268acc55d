// The soak's source of randomness: one seed, printed at the start, decides every choice of every
// client, so that a failing run can be repeated with `--seed`.

/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast generator whose whole state is one word, so
/// that each client can have its own stream derived from the run's seed and its number.
struct SoakRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) {
        self.state = seed
    }

    /// The generator of stream `number` of the run seeded with `seed`: each client draws from its own
    /// stream, so what one client does does not depend on how the threads were scheduled.
    init(seed: UInt64, stream number: Int) {
        var mixer = SoakRandom(seed: seed ^ (UInt64(number) &* 0xD1B5_4A32_D192_ED03))
        self.state = mixer.next()
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// True with probability `probability` (0 to 1).
    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A whole number in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// One of `items`, which must not be empty.
    mutating func pick<Element>(_ items: [Element]) -> Element {
        items[Int.random(in: 0..<items.count, using: &self)]
    }

    /// One of `choices`, each as likely as its weight says.
    mutating func weighted<Element>(_ choices: [(weight: Int, value: Element)]) -> Element {
        var ticket = Int.random(in: 0..<choices.reduce(0) { $0 + $1.weight }, using: &self)
        for choice in choices {
            if ticket < choice.weight { return choice.value }
            ticket -= choice.weight
        }
        return choices[choices.count - 1].value
    }

    /// A fresh seed for a run that was not given one.
    static func freshSeed() -> UInt64 {
        var system = SystemRandomNumberGenerator()
        // Kept below 2^53 so that it survives being pasted through tools that read numbers as doubles.
        return system.next() >> 11
    }
}
