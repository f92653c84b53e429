//! What a landing is given besides its job ([`LandConfig`]): the lander's seats and rounds, the
//! gates, the sandbox, the budget and the waits; of `epic run`'s options, only those a landing
//! reads.

use std::path::PathBuf;
use std::time::Duration;

use epic_agents::Roster;
use epic_process::Clock;
use epic_process::sandbox::{Credentials, SandboxMode, UserHome};
use epic_report::PriceTable;

/// The options of one `epic land`, resolved as for `epic run` (the flags over `epic.toml` over
/// the epic's last run's): the CLI builds it from the run options it resolves, a library user
/// with [`LandConfig::new`].
#[derive(Debug, Clone)]
pub struct LandConfig {
    /// The epic branch (`--epic-branch`); `None`: `epic/<epic-id>`.
    pub epic_branch: Option<String>,
    /// The seats a conflict's lander turn goes to: the run's coder roster.
    pub lander: Roster,
    /// Rounds a lander has to resolve a story's conflicts, at least 1 (`--max-rounds`).
    pub max_rounds: u32,
    /// How long one lander turn may take (`--turn-timeout`).
    pub turn_timeout: Duration,
    /// House rules added to every lander prompt (`rules` in `epic.toml`).
    pub extra_rules: String,
    /// Whether the lander's seats are checked before the first turn (`--no-preflight`: not).
    pub preflight: bool,
    /// The gates that must pass on the landing commit (`--gate`).
    pub gates: Vec<String>,
    /// How long one gate command may take (`--gate-timeout`).
    pub gate_timeout: Duration,
    /// Reruns of a red gate before it counts as red (`--gate-reruns`).
    pub gate_reruns: u32,
    /// The patterns that make a path a test file, for the test guard on lander turns.
    pub test_patterns: Vec<String>,
    /// Whether turns and gates run in the sandbox (`--sandbox`).
    pub sandbox: SandboxMode,
    /// The user's home, whose credential stores the sandbox hides (`--home`).
    pub home: Option<UserHome>,
    /// Credential stores shown to the turns after all (`--expose`).
    pub expose: Vec<PathBuf>,
    /// Files no turn may change (the project's `epic.toml`).
    pub guarded_files: Vec<PathBuf>,
    /// The epic's spending limit across runs and landings (`--budget-usd`).
    pub budget_usd: Option<f64>,
    /// The prices usage is estimated at.
    pub prices: PriceTable,
    /// The longest a seat's pause may last (`--max-wait`).
    pub max_wait: Duration,
    /// How long a turn may stream only "cannot reach the service" (`--outage-wait`).
    pub outage_wait: Duration,
    /// How long a turn may print nothing before it is ended as stalled (`--stall-timeout`).
    pub stall_timeout: Duration,
    /// What pauses and the stall watchdog are timed on.
    pub clock: Clock,
}

impl LandConfig {
    /// A landing whose conflicts go to `lander`, with no gates, in the sandbox where it can be
    /// made (`--sandbox auto`), and the other options at `epic run`'s defaults.
    pub fn new(lander: impl Into<Roster>) -> Self {
        Self {
            epic_branch: None,
            lander: lander.into(),
            max_rounds: 3,
            turn_timeout: Duration::from_mins(30),
            extra_rules: String::new(),
            preflight: true,
            gates: Vec::new(),
            gate_timeout: Duration::from_mins(30),
            gate_reruns: 1,
            test_patterns: epic_guard::DEFAULT_TEST_PATTERNS
                .iter()
                .map(|pattern| (*pattern).to_owned())
                .collect(),
            sandbox: SandboxMode::Auto,
            home: None,
            expose: Vec::new(),
            guarded_files: Vec::new(),
            budget_usd: None,
            prices: PriceTable::default(),
            max_wait: Duration::from_hours(6),
            outage_wait: Duration::from_mins(2),
            stall_timeout: Duration::from_mins(10),
            clock: Clock::system(),
        }
    }

    /// The credential stores the landing's sandbox hides: the home's but those exposed.
    pub fn credentials(&self) -> Credentials {
        Credentials::new(self.home.as_ref(), &self.expose)
    }
}
