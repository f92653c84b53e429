//! The scheduler's decisions, as a synchronous state machine: which stories may start now, and
//! what a finished or failed story changes. No runtime, no I/O; the async run loop around it only
//! starts what [`Schedule::start_ready`] hands out and reports back.
//!
//! Policies ([`Policy`]): among ready stories (every dependency merged), `critical-path` starts
//! the one with the longest remaining dependency chain first (weights from the previous run's
//! durations when known), then plan order; `plan-order` starts them in plan order (the reference
//! executor's policy); `waves` also waits for every story of the earlier waves to finish, as
//! schedulers with wave barriers do.

use std::collections::HashSet;

use story_plan::{Story, ValidPlan};

/// How the scheduler orders ready stories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Longest remaining dependency chain first, then plan order.
    #[default]
    CriticalPath,
    /// Plan order.
    PlanOrder,
    /// Plan order, and a wave starts only when every earlier wave has finished.
    Waves,
}

/// Where one story stands in this run (not to be confused with the concurrency slot a running
/// story occupies, `EPIC_SLOT`, which the run loop hands out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Not started; waits for its dependencies (or a free slot).
    Waiting,
    /// Being implemented.
    Running,
    /// Merged into the epic branch (in this run or an earlier one).
    Done,
    /// Failed.
    Failed,
    /// On hold: a story it depends on failed.
    Skipped {
        /// The failed story that holds it back.
        blocked_by: String,
    },
}

impl Standing {
    fn is_finished(&self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Skipped { .. })
    }
}

/// The scheduling state of one run over a valid plan.
#[derive(Debug, Clone)]
pub struct Schedule {
    ids: Vec<String>,
    dependencies: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    waves: Vec<usize>,
    priority: Vec<u64>,
    slots: Vec<Standing>,
    policy: Policy,
    halted: bool,
}

impl Schedule {
    /// A schedule over `plan` where the stories in `merged` are already done. `weight` gives each
    /// story's expected duration (any unit; 1 for all when nothing is known) for the
    /// critical-path policy.
    pub fn new(
        plan: &ValidPlan,
        policy: Policy,
        weight: impl Fn(&Story) -> u64,
        merged: &HashSet<String>,
    ) -> Self {
        let n = plan.plan().stories.len();
        let mut dependencies = vec![Vec::new(); n];
        let mut dependents = vec![Vec::new(); n];
        for (from, to) in plan.edges() {
            dependencies[to].push(from);
            dependents[from].push(to);
        }
        let ids: Vec<String> = plan.plan().stories.iter().map(|s| s.id.clone()).collect();
        let slots = ids
            .iter()
            .map(|id| {
                if merged.contains(id) {
                    Standing::Done
                } else {
                    Standing::Waiting
                }
            })
            .collect();
        Self {
            ids,
            dependencies,
            dependents,
            waves: plan.wave_numbers(),
            priority: plan.remaining_chain_by(weight),
            slots,
            policy,
            halted: false,
        }
    }

    /// The story ids, in plan order (indices are plan indices).
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Where story `i` stands.
    pub fn standing(&self, i: usize) -> &Standing {
        &self.slots[i]
    }

    /// How many stories are running.
    pub fn running(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| **s == Standing::Running)
            .count()
    }

    /// The stories that may start now, most urgent first, without starting them.
    pub fn ready(&self) -> Vec<usize> {
        if self.halted {
            return Vec::new();
        }
        let barrier = match self.policy {
            // The earliest wave that still has an unfinished story.
            Policy::Waves => (0..self.slots.len())
                .filter(|&i| !self.slots[i].is_finished())
                .map(|i| self.waves[i])
                .min(),
            Policy::CriticalPath | Policy::PlanOrder => None,
        };
        let mut ready: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i] == Standing::Waiting)
            .filter(|&i| {
                self.dependencies[i]
                    .iter()
                    .all(|&d| self.slots[d] == Standing::Done)
            })
            .filter(|&i| barrier.is_none_or(|wave| self.waves[i] <= wave))
            .collect();
        if self.policy == Policy::CriticalPath {
            // Stable: equal priorities keep plan order.
            ready.sort_by(|&a, &b| self.priority[b].cmp(&self.priority[a]));
        }
        ready
    }

    /// Marks as running, and returns, up to `free` of the [`ready`](Self::ready) stories.
    pub fn start_ready(&mut self, free: usize) -> Vec<usize> {
        let started: Vec<usize> = self.ready().into_iter().take(free).collect();
        for &i in &started {
            self.slots[i] = Standing::Running;
        }
        started
    }

    /// Story `i` merged.
    pub fn done(&mut self, i: usize) {
        self.slots[i] = Standing::Done;
    }

    /// Story `i` failed: every story that depends on it, directly or not, and has not finished is
    /// skipped with `blocked by <id>`. Returns the skipped stories in plan order.
    pub fn fail(&mut self, i: usize) -> Vec<usize> {
        self.slots[i] = Standing::Failed;
        let mut skipped = Vec::new();
        let mut stack = self.dependents[i].clone();
        let mut seen = vec![false; self.slots.len()];
        while let Some(d) = stack.pop() {
            if std::mem::replace(&mut seen[d], true) {
                continue;
            }
            if self.slots[d] == Standing::Waiting {
                self.slots[d] = Standing::Skipped {
                    blocked_by: self.ids[i].clone(),
                };
                skipped.push(d);
            }
            stack.extend(self.dependents[d].iter().copied());
        }
        skipped.sort_unstable();
        skipped
    }

    /// Starts nothing more (fail-fast, or an interrupt); running stories finish or are cancelled
    /// by the caller.
    pub fn halt(&mut self) {
        self.halted = true;
    }

    /// Whether [`halt`](Self::halt) was called.
    pub fn is_halted(&self) -> bool {
        self.halted
    }

    /// Whether the run is over: nothing running, and nothing more will start.
    pub fn is_finished(&self) -> bool {
        self.running() == 0 && self.ready().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use story_plan::{Story, StoryPlan};

    use super::*;

    fn diamond() -> ValidPlan {
        StoryPlan {
            epic_id: "diamond".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]),
                Story::new("b", "B", ["b"]),
                Story::new("c", "C", ["c"]).depending_on(["a"]),
                Story::new("d", "D", ["d"]).depending_on(["b", "c"]),
            ],
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn dependents_start_only_after_their_dependencies() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new());
        assert_eq!(s.start_ready(2), [0, 1]);
        assert!(s.start_ready(2).is_empty());
        s.done(0);
        assert_eq!(s.start_ready(2), [2]);
        s.done(2);
        assert!(s.start_ready(2).is_empty(), "d still waits for b");
        s.done(1);
        assert_eq!(s.start_ready(2), [3]);
        s.done(3);
        assert!(s.is_finished());
    }

    #[test]
    fn critical_path_first() {
        // a -> c -> d is the longer chain: with one slot, a goes before b.
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("b", "B", ["b"]),
                Story::new("a", "A", ["a"]),
                Story::new("c", "C", ["c"]).depending_on(["a"]),
            ],
        }
        .validate()
        .unwrap();
        let mut s = Schedule::new(&plan, Policy::CriticalPath, |_| 1, &HashSet::new());
        assert_eq!(s.start_ready(1), [1]);
        let mut s = Schedule::new(&plan, Policy::PlanOrder, |_| 1, &HashSet::new());
        assert_eq!(s.start_ready(1), [0]);
        // Weights can overturn chain length.
        let mut s = Schedule::new(
            &plan,
            Policy::CriticalPath,
            |st| if st.id == "b" { 10 } else { 1 },
            &HashSet::new(),
        );
        assert_eq!(s.start_ready(1), [0]);
    }

    #[test]
    fn waves_wait_for_the_whole_previous_wave() {
        let mut s = Schedule::new(&diamond(), Policy::Waves, |_| 1, &HashSet::new());
        assert_eq!(s.start_ready(4), [0, 1]);
        s.done(0);
        assert!(
            s.start_ready(4).is_empty(),
            "c waits for b, wave 1 is not over"
        );
        s.done(1);
        assert_eq!(s.start_ready(4), [2]);
    }

    #[test]
    fn failure_skips_exactly_the_transitive_dependents() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new());
        s.start_ready(4);
        assert_eq!(s.fail(0), [2, 3]);
        assert_eq!(
            *s.standing(3),
            Standing::Skipped {
                blocked_by: "a".into()
            }
        );
        assert_eq!(
            *s.standing(1),
            Standing::Running,
            "independent story goes on"
        );
        s.done(1);
        assert!(s.is_finished());
    }

    #[test]
    fn merged_stories_count_as_done() {
        let merged: HashSet<String> = ["a".to_owned()].into();
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &merged);
        assert_eq!(s.start_ready(4), [1, 2]);
    }

    #[test]
    fn halt_starts_nothing_more() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new());
        s.start_ready(1);
        s.halt();
        assert!(s.start_ready(4).is_empty());
        assert!(!s.is_finished());
        s.fail(0);
        assert!(s.is_finished());
    }
}
