//! One seeded generator for every test and benchmark that draws numbers: splitmix64, whose
//! output depends on nothing but the seed, so a seed a failure names replays it on any machine.

/// splitmix64 (Steele, Lea and Flood; the seeding generator of xoshiro): small, every seed
/// valid (zero included), the same numbers on every machine. Not for cryptography.
///
/// ```
/// use epic_test_support::Rng;
///
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// let draws: Vec<u64> = (0..4).map(|_| a.below(10)).collect();
/// assert_eq!(draws, (0..4).map(|_| b.below(10)).collect::<Vec<_>>());
/// assert!(draws.iter().all(|&n| n < 10));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    seed: u64,
    state: u64,
}

impl Rng {
    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed, state: seed }
    }

    /// The generator seeded from the variable `key` (a decimal `u64`) when it is set and
    /// parses, else with `default`: a fixed seed, which a failure's message names
    /// ([`seed`](Self::seed)) and the variable replays or varies.
    pub fn from_env(key: &str, default: u64) -> Self {
        let seed = std::env::var(key)
            .ok()
            .and_then(|seed| seed.trim().parse().ok())
            .unwrap_or(default);
        Self::new(seed)
    }

    /// The seed it started from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`; 0 when `bound` is 0. The modulo bias is below 2⁻³² for the
    /// bounds tests use (under 2³²).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        self.next_u64() % bound
    }

    /// An index in `0..len`; 0 when `len` is 0.
    pub fn index(&mut self, len: usize) -> usize {
        let bound = u64::try_from(len).unwrap_or(u64::MAX);
        usize::try_from(self.below(bound)).unwrap_or(0)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `items` (`&str`s, numbers: anything `Copy`), chosen uniformly; panics when there
    /// is none.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        assert!(!items.is_empty(), "pick from nothing");
        items[self.index(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_numbers_are_splitmix64s_on_every_machine() {
        // The first outputs of splitmix64 seeded with 0, as its reference implementation
        // (Vigna's splitmix64.c) prints them.
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn bounds_hold_and_empty_ones_give_zero() {
        let mut rng = Rng::new(42);
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.index(0), 0);
        assert!((0..1000).all(|_| rng.below(7) < 7));
        assert!((0..1000).all(|_| rng.index(3) < 3));
        assert!((0..100).all(|_| !rng.chance(0) && rng.chance(100)));
        assert_eq!(rng.seed(), 42);
    }
}
