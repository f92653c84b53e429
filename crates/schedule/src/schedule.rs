//! The scheduler's decisions, as a synchronous state machine: which stories may start now, and
//! what a finished or failed story changes ([`Schedule`], whose docs say how it orders them).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use epic_story_plan::{Story, ValidPlan};

/// The order among ready stories (`--schedule`, `schedule`).
//
// The doc comments here are also `epic run --help`'s and `epic schema config`'s text (the CLI
// parses `--schedule` and `epic.toml` straight into this type), so they are written for users,
// and the docs of `Schedule` say the rest (ties go in plan order). Serialised by its kebab-case
// names, as `epic.toml` writes them; its JSON Schema is named after the CLI's key.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Schedule")]
pub enum Policy {
    /// Longest remaining dependency chain first
    #[default]
    CriticalPath,
    /// The plan's order
    PlanOrder,
    /// Each wave waits for the previous one
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
    /// Cancelled while it ran (an interrupt, or fail-fast: [`Schedule::cancelled`]); its state
    /// stays resumable, and a rerun resumes it.
    Cancelled,
    /// Held by a person: it waits for their answer (`epic answer`), its slot given to others;
    /// its dependents wait with it.
    Held,
    /// On hold: a story it depends on failed.
    Skipped {
        /// The failed story that holds it back.
        blocked_by: String,
    },
}

impl Standing {
    fn is_finished(&self) -> bool {
        matches!(
            self,
            Self::Done | Self::Failed | Self::Cancelled | Self::Skipped { .. }
        )
    }
}

/// The scheduling state of one run over a valid plan: which stories may start now, and what a
/// finished or failed story changes.
///
/// A synchronous state machine: no runtime, no I/O. The executor's `run_epic` is a thin
/// async loop around it that starts what [`start_ready`](Self::start_ready) hands out and
/// reports back ([`done`](Self::done), [`fail`](Self::fail), [`cancelled`](Self::cancelled));
/// a simulation or a benchmark drives it the same way, with a clock of its own.
///
/// Policies ([`Policy`]): among ready stories (every dependency merged), `critical-path` starts
/// the one with the longest remaining dependency chain first (weights from the previous run's
/// durations when known), then plan order; `plan-order` starts them in plan order (the reference
/// executor's policy); `waves` also waits for every story of the earlier waves to finish, as
/// schedulers with wave barriers do.
///
/// Longest-chain-first is a list-scheduling rule, and no such rule is optimal: on some plans,
/// plan order happens to finish sooner. So before the run, `critical-path` plays both orders
/// through the expected durations on the run's concurrency (a simulation of that loop, in
/// `O((n + e) log n)`) and keeps plan order when it finishes strictly sooner. With the true
/// durations, `critical-path` is thus never slower than plan order; with estimates, it is as good
/// as they are.
///
/// ```
/// use std::collections::HashSet;
///
/// use epic_schedule::{Policy, Schedule};
/// use epic_story_plan::{Story, StoryPlan};
///
/// // `b` stands alone; `a` heads the chain a -> c.
/// let plan = StoryPlan {
///     epic_id: "e".into(),
///     epic: String::new(),
///     stories: vec![
///         Story::new("b", "B", ["b"]),
///         Story::new("a", "A", ["a"]),
///         Story::new("c", "C", ["c"]).depending_on(["a"]),
///     ],
/// }
/// .validate()?;
/// let mut schedule = Schedule::new(&plan, Policy::CriticalPath, |_| 1, &HashSet::new(), 1);
/// assert_eq!(schedule.start_ready(1), [1], "the chain's head goes first");
/// schedule.done(1);
/// // b and c now head chains of one story each: plan order breaks the tie.
/// assert_eq!(schedule.start_ready(1), [0]);
/// # Ok::<(), epic_story_plan::PlanErrors>(())
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    ids: Vec<String>,
    dependencies: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    waves: Vec<usize>,
    /// Each story's place in the start order among ready stories: lower starts first.
    rank: Vec<usize>,
    /// Whether `critical-path` fell back to plan order, which its simulation found faster.
    plan_order_is_faster: bool,
    /// Where each story stands, by plan index.
    standings: Vec<Standing>,
    policy: Policy,
    /// Why nothing more starts ([`halt`](Self::halt)): the first reason given.
    halted: Option<String>,
    /// Whether the run was interrupted ([`interrupt`](Self::interrupt)).
    interrupted: bool,
    /// Why the running stories are being cancelled ([`cancel_running`](Self::cancel_running)).
    cancelling: Option<String>,
}

impl Schedule {
    /// A schedule over `plan` where the stories in `merged` are already done. `weight` gives each
    /// story's expected duration (any unit; 1 for all when nothing is known) for the
    /// critical-path policy, which plans for `concurrency` stories at once (see the type's docs).
    pub fn new(
        plan: &ValidPlan,
        policy: Policy,
        weight: impl Fn(&Story) -> u64,
        merged: &HashSet<String>,
        concurrency: usize,
    ) -> Self {
        let n = plan.plan().stories.len();
        let mut dependencies = vec![Vec::new(); n];
        let mut dependents = vec![Vec::new(); n];
        for (from, to) in plan.edges() {
            dependencies[to].push(from);
            dependents[from].push(to);
        }
        let ids: Vec<String> = plan.plan().stories.iter().map(|s| s.id.clone()).collect();
        let standings = ids
            .iter()
            .map(|id| {
                if merged.contains(id) {
                    Standing::Done
                } else {
                    Standing::Waiting
                }
            })
            .collect();
        let plan_order: Vec<usize> = (0..n).collect();
        let mut schedule = Self {
            ids,
            dependencies,
            dependents,
            waves: plan.wave_numbers(),
            rank: plan_order.clone(),
            plan_order_is_faster: false,
            standings,
            policy,
            halted: None,
            interrupted: false,
            cancelling: None,
        };
        if policy == Policy::CriticalPath {
            let remaining = plan.remaining_chain_by(&weight);
            let mut by_chain = plan_order.clone();
            // Stable: equal chains keep plan order.
            by_chain.sort_by_key(|&i| Reverse(remaining[i]));
            let mut critical = vec![0; n];
            for (place, &i) in by_chain.iter().enumerate() {
                critical[i] = place;
            }
            let weights: Vec<u64> = plan.plan().stories.iter().map(&weight).collect();
            let concurrency = concurrency.max(1);
            let chain_first = schedule.simulate(&weights, &critical, concurrency);
            let in_plan_order = schedule.simulate(&weights, &plan_order, concurrency);
            if in_plan_order < chain_first {
                schedule.plan_order_is_faster = true;
            } else {
                schedule.rank = critical;
            }
        }
        schedule
    }

    /// The makespan of this schedule from its current standings, with `weights` as durations,
    /// `concurrency` slots, and ready stories started by `rank`: the run loop played out with no
    /// cost of its own. Running stories count as just started.
    fn simulate(&self, weights: &[u64], rank: &[usize], concurrency: usize) -> u64 {
        let n = self.standings.len();
        let mut waiting: Vec<usize> = (0..n)
            .map(|i| {
                self.dependencies[i]
                    .iter()
                    .filter(|&&d| self.standings[d] != Standing::Done)
                    .count()
            })
            .collect();
        let mut ready: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
        let mut running: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        for i in 0..n {
            match self.standings[i] {
                Standing::Waiting if waiting[i] == 0 => ready.push(Reverse((rank[i], i))),
                Standing::Running => running.push(Reverse((weights[i], i))),
                _ => {}
            }
        }
        let mut now: u64 = 0;
        loop {
            while running.len() < concurrency {
                let Some(Reverse((_, i))) = ready.pop() else {
                    break;
                };
                running.push(Reverse((now.saturating_add(weights[i]), i)));
            }
            let Some(Reverse((end, first))) = running.pop() else {
                return now;
            };
            now = end;
            let mut finished = vec![first];
            while let Some(&Reverse((end, i))) = running.peek()
                && end == now
            {
                running.pop();
                finished.push(i);
            }
            for i in finished {
                for &d in &self.dependents[i] {
                    waiting[d] -= 1;
                    if waiting[d] == 0 && self.standings[d] == Standing::Waiting {
                        ready.push(Reverse((rank[d], d)));
                    }
                }
            }
        }
    }

    /// Whether `critical-path` starts stories in plan order on this run, because playing both
    /// orders through the expected durations found plan order strictly faster.
    pub fn plan_order_is_faster(&self) -> bool {
        self.plan_order_is_faster
    }

    /// The story ids, in plan order (indices are plan indices).
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Where story `i` stands.
    pub fn standing(&self, i: usize) -> &Standing {
        &self.standings[i]
    }

    /// How many stories are running.
    pub fn running(&self) -> usize {
        self.standings
            .iter()
            .filter(|s| **s == Standing::Running)
            .count()
    }

    /// The stories that may start now, most urgent first, without starting them.
    pub fn ready(&self) -> Vec<usize> {
        if self.is_halted() {
            return Vec::new();
        }
        let barrier = match self.policy {
            // The earliest wave that still has an unfinished story.
            Policy::Waves => (0..self.standings.len())
                .filter(|&i| !self.standings[i].is_finished())
                .map(|i| self.waves[i])
                .min(),
            Policy::CriticalPath | Policy::PlanOrder => None,
        };
        let mut ready: Vec<usize> = (0..self.standings.len())
            .filter(|&i| self.standings[i] == Standing::Waiting)
            .filter(|&i| {
                self.dependencies[i]
                    .iter()
                    .all(|&d| self.standings[d] == Standing::Done)
            })
            .filter(|&i| barrier.is_none_or(|wave| self.waves[i] <= wave))
            .collect();
        ready.sort_by_key(|&i| self.rank[i]);
        ready
    }

    /// Marks as running, and returns, up to `free` of the [`ready`](Self::ready) stories.
    pub fn start_ready(&mut self, free: usize) -> Vec<usize> {
        let started: Vec<usize> = self.ready().into_iter().take(free).collect();
        for &i in &started {
            self.standings[i] = Standing::Running;
        }
        started
    }

    /// Story `i` merged.
    pub fn done(&mut self, i: usize) {
        self.standings[i] = Standing::Done;
    }

    /// Story `i` failed: every story that depends on it, directly or not, and has not finished is
    /// skipped with `blocked by <id>`. Returns the skipped stories in plan order.
    pub fn fail(&mut self, i: usize) -> Vec<usize> {
        self.standings[i] = Standing::Failed;
        let mut skipped = Vec::new();
        let mut stack = self.dependents[i].clone();
        let mut seen = vec![false; self.standings.len()];
        while let Some(d) = stack.pop() {
            if std::mem::replace(&mut seen[d], true) {
                continue;
            }
            if self.standings[d] == Standing::Waiting {
                self.standings[d] = Standing::Skipped {
                    blocked_by: self.ids[i].clone(),
                };
                skipped.push(d);
            }
            stack.extend(self.dependents[d].iter().copied());
        }
        skipped.sort_unstable();
        skipped
    }

    /// Story `i`, running, now waits for a person's answer ([`Standing::Held`]): nothing that
    /// depends on it starts, and nothing is skipped.
    pub fn hold(&mut self, i: usize) {
        self.standings[i] = Standing::Held;
    }

    /// Story `i` runs again (`epic retry`, or an answer to a held story): failed, cancelled,
    /// held or skipped, it is ready again once its dependencies are done, and every story skipped
    /// because of it waits again. Returns those un-skipped, in plan order; nothing when `i` is
    /// running, done, or not started.
    pub fn retry(&mut self, i: usize) -> Vec<usize> {
        if matches!(
            self.standings[i],
            Standing::Waiting | Standing::Running | Standing::Done
        ) {
            return Vec::new();
        }
        self.standings[i] = Standing::Waiting;
        let id = &self.ids[i];
        let mut freed: Vec<usize> = (0..self.standings.len())
            .filter(|&d| {
                matches!(&self.standings[d], Standing::Skipped { blocked_by } if blocked_by == id)
            })
            .collect();
        for &d in &freed {
            self.standings[d] = Standing::Waiting;
        }
        freed.sort_unstable();
        freed
    }

    /// Story `i`, running, was cancelled (after [`interrupt`](Self::interrupt) or
    /// [`cancel_running`](Self::cancel_running)): it stops running, and stays resumable for a
    /// rerun.
    pub fn cancelled(&mut self, i: usize) {
        self.standings[i] = Standing::Cancelled;
    }

    /// Starts nothing more because of `reason` (a failure after which no story may start);
    /// running stories go on. The first reason is kept.
    pub fn halt(&mut self, reason: impl Into<String>) {
        self.halted.get_or_insert_with(|| reason.into());
    }

    /// Starts nothing more, and the caller cancels the running stories, because of `reason`
    /// (fail-fast); each then ends [`cancelled`](Self::cancelled). The first reason is kept, as
    /// the halt's too.
    pub fn cancel_running(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        self.halt(reason.clone());
        self.cancelling.get_or_insert(reason);
    }

    /// The run was interrupted from outside: nothing more starts, and the caller cancels the
    /// running stories.
    pub fn interrupt(&mut self) {
        self.interrupted = true;
    }

    /// Whether nothing more starts ([`halt`](Self::halt), [`cancel_running`](Self::cancel_running)
    /// or [`interrupt`](Self::interrupt)).
    pub fn is_halted(&self) -> bool {
        self.interrupted || self.halted.is_some()
    }

    /// Whether [`interrupt`](Self::interrupt) was called.
    pub fn is_interrupted(&self) -> bool {
        self.interrupted
    }

    /// Why nothing more starts: `the run was interrupted` after an interrupt, else the first
    /// reason given to [`halt`](Self::halt) or [`cancel_running`](Self::cancel_running).
    pub fn halt_reason(&self) -> Option<&str> {
        if self.interrupted {
            Some("the run was interrupted")
        } else {
            self.halted.as_deref()
        }
    }

    /// Why the running stories are cancelled, when [`cancel_running`](Self::cancel_running)
    /// said; `None` when only an interrupt cancels them.
    pub fn cancel_reason(&self) -> Option<&str> {
        self.cancelling.as_deref()
    }

    /// Whether the run is over: nothing running, and nothing more will start.
    pub fn is_finished(&self) -> bool {
        self.running() == 0 && self.ready().is_empty() && self.held() == 0
    }

    /// How many stories wait for a person's answer ([`Standing::Held`]).
    pub fn held(&self) -> usize {
        self.standings
            .iter()
            .filter(|s| **s == Standing::Held)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use epic_story_plan::{Story, StoryPlan};

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
    fn a_retried_story_runs_again_and_frees_what_it_skipped() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        assert_eq!(s.start_ready(2), [0, 1]);
        assert_eq!(s.fail(0), [2, 3], "c and d skipped behind a");
        s.done(1);
        assert!(s.start_ready(2).is_empty());
        assert_eq!(s.retry(0), [2, 3]);
        assert_eq!(s.start_ready(2), [0]);
        assert!(s.retry(0).is_empty(), "running: nothing to retry");
        s.done(0);
        assert_eq!(s.start_ready(2), [2]);
    }

    #[test]
    fn a_held_story_keeps_its_dependents_waiting_until_it_runs_again() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        assert_eq!(s.start_ready(2), [0, 1]);
        s.hold(0);
        s.done(1);
        assert!(s.start_ready(2).is_empty(), "c waits for a, held");
        assert!(!s.is_finished());
        assert!(s.retry(0).is_empty(), "nothing was skipped");
        assert_eq!(s.start_ready(2), [0]);
    }

    #[test]
    fn dependents_start_only_after_their_dependencies() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
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
        let mut s = Schedule::new(&plan, Policy::CriticalPath, |_| 1, &HashSet::new(), 2);
        assert_eq!(s.start_ready(1), [1]);
        let mut s = Schedule::new(&plan, Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        assert_eq!(s.start_ready(1), [0]);
        // Weights can overturn chain length.
        let mut s = Schedule::new(
            &plan,
            Policy::CriticalPath,
            |st| if st.id == "b" { 10 } else { 1 },
            &HashSet::new(),
            1,
        );
        assert_eq!(s.start_ready(1), [0]);
    }

    #[test]
    fn critical_path_keeps_plan_order_where_it_finishes_sooner() {
        // Two slots; durations a 1, b 2, c 3, d 2, and d follows a. Longest chain first starts a
        // and c (chains of 3), then b, and d waits until c or b ends: 5. Plan order starts a and
        // b, then c at 1 and d at 2: 4.
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]),
                Story::new("b", "B", ["b"]),
                Story::new("c", "C", ["c"]),
                Story::new("d", "D", ["d"]).depending_on(["a"]),
            ],
        }
        .validate()
        .unwrap();
        let weight = |story: &Story| match story.id.as_str() {
            "a" => 1,
            "c" => 3,
            _ => 2,
        };
        let mut s = Schedule::new(&plan, Policy::CriticalPath, weight, &HashSet::new(), 2);
        assert!(s.plan_order_is_faster());
        assert_eq!(s.start_ready(2), [0, 1]);
        s.done(0);
        assert_eq!(s.start_ready(1), [2], "c before d, as in plan order");
        // With three slots both orders take 3: the chain goes first again.
        let mut s = Schedule::new(&plan, Policy::CriticalPath, weight, &HashSet::new(), 3);
        assert!(!s.plan_order_is_faster());
        assert_eq!(s.start_ready(1), [0]);
        assert_eq!(s.start_ready(1), [2]);
    }

    #[test]
    fn the_simulation_plays_the_loop_out() {
        let plan = diamond();
        let s = Schedule::new(&plan, Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        // a, b at 0; c at 1; d at 2, after c.
        assert_eq!(s.simulate(&[1, 1, 1, 1], &[0, 1, 2, 3], 2), 3);
        assert_eq!(s.simulate(&[1, 1, 1, 1], &[0, 1, 2, 3], 1), 4);
        // b takes 5: d waits for it.
        assert_eq!(s.simulate(&[1, 5, 1, 1], &[0, 1, 2, 3], 2), 6);
        // Merged stories are done before the start, running ones count as just started.
        let merged: HashSet<String> = ["a".to_owned()].into();
        let mut s = Schedule::new(&plan, Policy::PlanOrder, |_| 1, &merged, 2);
        assert_eq!(s.start_ready(1), [1]);
        assert_eq!(s.simulate(&[9, 2, 1, 1], &[0, 1, 2, 3], 2), 3);
    }

    /// Drives `schedule` as the run loop does, each story taking `durations[i]`: the makespan.
    fn play(mut schedule: Schedule, durations: &[u64], concurrency: usize) -> u64 {
        let mut now = 0;
        let mut running: Vec<(u64, usize)> = Vec::new();
        loop {
            for i in schedule.start_ready(concurrency - running.len()) {
                running.push((now + durations[i], i));
            }
            let Some(next) = running.iter().map(|&(end, _)| end).min() else {
                return now;
            };
            now = next;
            for &(_, i) in running.iter().filter(|&&(end, _)| end == next) {
                schedule.done(i);
            }
            running.retain(|&(end, _)| end != next);
        }
    }

    proptest::proptest! {
        /// With the true durations as weights, critical-path never finishes after plan order,
        /// and its simulation predicts the makespan the loop then reaches.
        #[test]
        fn critical_path_is_never_slower_than_plan_order(
            stories in proptest::collection::vec(
                (proptest::collection::vec(0usize..8, 0..4), 1u64..20),
                1..24,
            ),
            concurrency in 1usize..5,
        ) {
            let plan = StoryPlan {
                epic_id: "e".into(),
                epic: String::new(),
                stories: stories
                    .iter()
                    .enumerate()
                    .map(|(i, (back, _))| {
                        let mut deps: Vec<String> = back
                            .iter()
                            .filter(|&&b| b < i)
                            .map(|&b| format!("s{}", i - 1 - b))
                            .collect();
                        deps.sort();
                        deps.dedup();
                        Story::new(format!("s{i}"), "S", [format!("s{i}")]).depending_on(deps)
                    })
                    .collect(),
            }
            .validate()
            .unwrap();
            let durations: Vec<u64> = stories.iter().map(|&(_, d)| d).collect();
            let weight = |story: &Story| durations[plan.index_of(&story.id).unwrap()];
            let none = HashSet::new();
            let critical = Schedule::new(&plan, Policy::CriticalPath, weight, &none, concurrency);
            let identity: Vec<usize> = (0..durations.len()).collect();
            let predicted = critical.simulate(&durations, &critical.rank, concurrency);
            let ours = play(critical, &durations, concurrency);
            let theirs = play(
                Schedule::new(&plan, Policy::PlanOrder, weight, &none, concurrency),
                &durations,
                concurrency,
            );
            proptest::prop_assert_eq!(ours, predicted);
            proptest::prop_assert!(ours <= theirs, "critical-path {} > plan order {}", ours, theirs);
            let fresh = Schedule::new(&plan, Policy::PlanOrder, weight, &none, concurrency);
            proptest::prop_assert_eq!(theirs, fresh.simulate(&durations, &identity, concurrency));
        }
    }

    #[test]
    fn waves_wait_for_the_whole_previous_wave() {
        let mut s = Schedule::new(&diamond(), Policy::Waves, |_| 1, &HashSet::new(), 2);
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
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
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
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &merged, 2);
        assert_eq!(s.start_ready(4), [1, 2]);
    }

    #[test]
    fn halt_starts_nothing_more() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        s.start_ready(1);
        s.halt("the epic worktree is dirty");
        assert!(s.start_ready(4).is_empty());
        assert!(!s.is_finished());
        s.fail(0);
        assert!(s.is_finished());
        s.halt("a later reason");
        assert_eq!(s.halt_reason(), Some("the epic worktree is dirty"));
        assert_eq!(s.cancel_reason(), None);
        assert!(!s.is_interrupted());
    }

    #[test]
    fn cancelled_stories_stop_running_and_the_reasons_are_kept() {
        let mut s = Schedule::new(&diamond(), Policy::PlanOrder, |_| 1, &HashSet::new(), 2);
        assert_eq!(s.start_ready(2), [0, 1]);
        assert_eq!(s.fail(1), [3]);
        s.cancel_running("--fail-fast stopped the run after story 'b' failed");
        s.halt("later");
        assert!(s.is_halted() && s.start_ready(2).is_empty());
        assert_eq!(
            s.cancel_reason(),
            Some("--fail-fast stopped the run after story 'b' failed")
        );
        assert_eq!(s.halt_reason(), s.cancel_reason());
        s.cancelled(0);
        assert_eq!(*s.standing(0), Standing::Cancelled);
        assert_eq!(s.running(), 0);
        assert!(s.is_finished());
        // An interrupt is what the stories not started hear about; the cancelled ones keep the
        // fail-fast reason.
        s.interrupt();
        assert!(s.is_interrupted());
        assert_eq!(s.halt_reason(), Some("the run was interrupted"));
        assert!(s.cancel_reason().is_some());
    }
}
