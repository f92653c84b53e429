//! The gates' verdict on the epic head, command by command: the baseline a run checks before
//! any story, cached per commit in `gates/baseline.json`, and moved forward after each merge.

use std::collections::BTreeSet;

use crate::charged::Inherited;
use crate::gates::GateResult;
use std::path::PathBuf;

use epic_state_store::EpicDir;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `gates/baseline.json`: which gate commands passed on which epic head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GateBaseline {
    /// The epic head the gates ran on.
    pub commit: String,
    /// Every gate command, in order, with whether it passed.
    pub gates: Vec<GateVerdict>,
}

/// One gate command's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GateVerdict {
    /// The command.
    pub command: String,
    /// Whether it passed (with no test red).
    pub passed: bool,
    /// When it was red and named its failing tests: those tests. A story is then charged
    /// only with the tests it turns red; absent (red), the command is judged whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing: Option<BTreeSet<String>>,
}

impl GateVerdict {
    /// The verdict of `result`: passed only when no test of it was red; the failing tests it
    /// named, charged or inherited.
    pub fn of(result: &GateResult) -> Self {
        Self {
            command: result.command.clone(),
            passed: result.passed && result.tests.is_none(),
            failing: result.tests.as_ref().map(crate::GateTests::failing),
        }
    }
}

impl epic_state_store::Document for GateBaseline {
    const NAME: &'static str = "gate baseline";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; the next run checks the gates again";
}

impl GateBaseline {
    /// The path of the cache file in the epic's state directory.
    pub fn path(dir: &EpicDir) -> PathBuf {
        dir.root().join("gates").join("baseline.json")
    }

    /// The cached verdict for `commit` and exactly these `commands`, if there is one.
    pub fn cached(dir: &EpicDir, commit: &str, commands: &[String]) -> Option<Self> {
        let baseline = epic_state_store::load::<Self>(Self::path(dir)).ok()??;
        let same_commands = baseline
            .gates
            .iter()
            .map(|gate| &gate.command)
            .eq(commands.iter());
        (baseline.commit == commit && same_commands).then_some(baseline)
    }

    /// Saves it; a failure only costs the cache.
    pub fn save(&self, dir: &EpicDir) -> Result<(), epic_state_store::SaveError> {
        epic_state_store::save(Self::path(dir), self)
    }

    /// The commands that passed.
    pub fn passed(&self) -> BTreeSet<String> {
        self.gates
            .iter()
            .filter(|gate| gate.passed)
            .map(|gate| gate.command.clone())
            .collect()
    }

    /// The commands that failed naming their failing tests, with those tests: what a story is
    /// not charged with.
    pub fn inherited(&self) -> Inherited {
        self.gates
            .iter()
            .filter(|gate| !gate.passed)
            .filter_map(|gate| Some((gate.command.clone(), gate.failing.clone()?)))
            .collect()
    }

    /// The commands that failed, in order.
    pub fn failed(&self) -> Vec<String> {
        self.gates
            .iter()
            .filter(|gate| !gate.passed)
            .map(|gate| gate.command.clone())
            .collect()
    }
}
