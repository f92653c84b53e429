//! The dependency graph of a plan: waves, dependents, dependencies and the critical path.
//!
//! Edges run from a dependency to its dependent (`u -> v` when `v` depends on `u`), so a story's
//! wave is always greater than the waves of everything it depends on. Every output is in plan
//! order, so the same plan always gives the same answer.

use std::collections::{HashMap, HashSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::{Story, StoryPlan};

/// The graph of a plan, tolerant of the problems validation reports: unknown dependencies and
/// self-dependencies are left out as edges, and a duplicate id resolves to its first story.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    /// The first story with each id.
    index: HashMap<String, usize>,
    /// One node per story, node `i` being `plan.stories[i]`.
    edges: DiGraph<(), ()>,
    /// Stories with a dependency that is not in the plan.
    unknown_dependency: Vec<bool>,
}

impl Graph {
    pub(crate) fn new(plan: &StoryPlan) -> Self {
        let mut index = HashMap::with_capacity(plan.stories.len());
        for (i, story) in plan.stories.iter().enumerate() {
            index.entry(story.id.clone()).or_insert(i);
        }
        let edge_count = plan.stories.iter().map(|s| s.depends_on.len()).sum();
        let mut edges = DiGraph::with_capacity(plan.stories.len(), edge_count);
        for _ in &plan.stories {
            edges.add_node(());
        }
        let mut unknown_dependency = vec![false; plan.stories.len()];
        for (i, story) in plan.stories.iter().enumerate() {
            let mut seen = HashSet::with_capacity(story.depends_on.len());
            for dependency in &story.depends_on {
                match index.get(dependency.as_str()) {
                    Some(&d) if d != i && seen.insert(d) => {
                        edges.add_edge(NodeIndex::new(d), NodeIndex::new(i), ());
                    }
                    Some(_) => {}
                    None => unknown_dependency[i] = true,
                }
            }
        }
        Self {
            index,
            edges,
            unknown_dependency,
        }
    }

    pub(crate) fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub(crate) fn edges(&self) -> &DiGraph<(), ()> {
        &self.edges
    }

    /// The stories `i` depends on (known, deduplicated, not itself).
    fn dependencies_of(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges
            .neighbors_directed(NodeIndex::new(i), Direction::Incoming)
            .map(NodeIndex::index)
    }

    /// The stories that depend on `i`.
    fn dependents_of(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges
            .neighbors_directed(NodeIndex::new(i), Direction::Outgoing)
            .map(NodeIndex::index)
    }

    /// The earliest wave of each story (0-based), or `None` for a story that can never run: on a
    /// cycle, depending on an unknown id, or depending on such a story.
    pub(crate) fn wave_numbers(&self) -> Vec<Option<usize>> {
        let n = self.edges.node_count();
        let mut waiting: Vec<usize> = (0..n).map(|i| self.dependencies_of(i).count()).collect();
        let mut level = vec![0usize; n];
        let mut wave = vec![None; n];
        let mut queue: VecDeque<usize> = (0..n)
            .filter(|&i| waiting[i] == 0 && !self.unknown_dependency[i])
            .collect();
        while let Some(i) = queue.pop_front() {
            wave[i] = Some(level[i]);
            for d in self.dependents_of(i) {
                // `d` runs after the latest of its dependencies.
                level[d] = level[d].max(level[i] + 1);
                waiting[d] -= 1;
                if waiting[d] == 0 && !self.unknown_dependency[d] {
                    queue.push_back(d);
                }
            }
        }
        wave
    }

    /// Stories grouped by wave, each wave in plan order; stories that can never run are left out.
    pub(crate) fn waves(&self) -> Vec<Vec<usize>> {
        let mut waves: Vec<Vec<usize>> = Vec::new();
        for (i, wave) in self.wave_numbers().into_iter().enumerate() {
            if let Some(w) = wave {
                if waves.len() <= w {
                    waves.resize_with(w + 1, Vec::new);
                }
                waves[w].push(i);
            }
        }
        waves
    }

    /// Everything reachable from `start` along `step`, in plan order, without `start` itself.
    fn closure<I>(&self, start: usize, step: impl Fn(usize) -> I) -> Vec<usize>
    where
        I: Iterator<Item = usize>,
    {
        let mut seen = vec![false; self.edges.node_count()];
        seen[start] = true;
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            for next in step(i) {
                if !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        seen[start] = false;
        (0..seen.len()).filter(|&i| seen[i]).collect()
    }
}

/// A plan that passed [`StoryPlan::validate`]: every id unique and known, no cycle, every path
/// safe and every owner distinct. The graph functions live here because they need those
/// guarantees.
#[derive(Debug, Clone)]
pub struct ValidPlan {
    plan: StoryPlan,
    graph: Graph,
}

/// The longest dependency chain of a plan, with its total weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalPath<'a> {
    /// The chain, first dependency first.
    pub stories: Vec<&'a str>,
    /// The sum of the chain's weights (its length when every story weighs 1).
    pub length: u64,
}

impl ValidPlan {
    pub(crate) fn new(plan: StoryPlan, graph: Graph) -> Self {
        Self { plan, graph }
    }

    /// The plan.
    pub fn plan(&self) -> &StoryPlan {
        &self.plan
    }

    /// The plan, giving up the validity guarantee.
    pub fn into_plan(self) -> StoryPlan {
        self.plan
    }

    /// The plan index (position in `plan().stories`) of the story with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.graph.index_of(id)
    }

    /// The dependency edges as plan indices `(dependency, dependent)`, each once, in plan order:
    /// by dependent, then in the order its `depends_on` lists them.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        self.graph
            .edges()
            .raw_edges()
            .iter()
            .map(|edge| (edge.source().index(), edge.target().index()))
            .collect()
    }

    /// [`waves`](Self::waves) as plan indices.
    pub fn wave_indices(&self) -> Vec<Vec<usize>> {
        self.graph.waves()
    }

    /// The story with this id.
    pub fn story(&self, id: &str) -> Option<&Story> {
        self.graph.index_of(id).map(|i| &self.plan.stories[i])
    }

    fn ids(&self, indices: impl IntoIterator<Item = usize>) -> Vec<&str> {
        indices
            .into_iter()
            .map(|i| self.plan.stories[i].id.as_str())
            .collect()
    }

    /// The stories grouped by the earliest wave each can run in, each wave in plan order.
    ///
    /// ```
    /// use epic_story_plan::{Story, StoryPlan};
    /// let plan = StoryPlan {
    ///     epic_id: "shop".into(),
    ///     epic: String::new(),
    ///     stories: vec![
    ///         Story::new("api", "API", ["src/api"]),
    ///         Story::new("ui", "UI", ["src/ui"]).depending_on(["api"]),
    ///         Story::new("docs", "Docs", ["docs"]),
    ///     ],
    /// };
    /// let plan = plan.validate()?;
    /// assert_eq!(plan.waves(), [vec!["api", "docs"], vec!["ui"]]);
    /// # Ok::<(), epic_story_plan::PlanErrors>(())
    /// ```
    pub fn waves(&self) -> Vec<Vec<&str>> {
        self.graph
            .waves()
            .into_iter()
            .map(|wave| self.ids(wave))
            .collect()
    }

    /// The 0-based wave of each story, in plan order.
    pub fn wave_numbers(&self) -> Vec<usize> {
        // A valid plan places every story.
        self.graph
            .wave_numbers()
            .into_iter()
            .map(|w| w.unwrap_or(0))
            .collect()
    }

    /// Every story that depends on `id`, directly or not, in plan order; empty for an unknown id.
    pub fn dependents(&self, id: &str) -> Vec<&str> {
        match self.graph.index_of(id) {
            Some(i) => self.ids(self.graph.closure(i, |j| self.graph.dependents_of(j))),
            None => Vec::new(),
        }
    }

    /// Every story `id` depends on, directly or not, in plan order; empty for an unknown id.
    pub fn dependencies(&self, id: &str) -> Vec<&str> {
        match self.graph.index_of(id) {
            Some(i) => self.ids(self.graph.closure(i, |j| self.graph.dependencies_of(j))),
            None => Vec::new(),
        }
    }

    /// Plan indices in an order where every story follows its dependencies.
    fn topological(&self) -> Vec<usize> {
        self.graph.waves().into_iter().flatten().collect()
    }

    /// The longest dependency chain, every story weighing 1.
    pub fn critical_path(&self) -> CriticalPath<'_> {
        self.critical_path_by(|_| 1)
    }

    /// The heaviest dependency chain under `weight`. Ties go to the chain that ends, and then
    /// runs through, the earliest stories in plan order.
    ///
    /// ```
    /// use epic_story_plan::{Story, StoryPlan};
    /// let plan = StoryPlan {
    ///     epic_id: "shop".into(),
    ///     epic: String::new(),
    ///     stories: vec![
    ///         Story::new("api", "API", ["src/api"]),
    ///         Story::new("ui", "UI", ["src/ui"]).depending_on(["api"]),
    ///         Story::new("docs", "Docs", ["docs"]),
    ///     ],
    /// }
    /// .validate()?;
    /// assert_eq!(plan.critical_path().stories, ["api", "ui"]);
    /// let heavy_docs = plan.critical_path_by(|s| if s.id == "docs" { 10 } else { 1 });
    /// assert_eq!((heavy_docs.stories, heavy_docs.length), (vec!["docs"], 10));
    /// # Ok::<(), epic_story_plan::PlanErrors>(())
    /// ```
    pub fn critical_path_by(&self, weight: impl Fn(&Story) -> u64) -> CriticalPath<'_> {
        let n = self.plan.stories.len();
        let mut best = vec![0u64; n];
        let mut previous: Vec<Option<usize>> = vec![None; n];
        for i in self.topological() {
            let heaviest = self
                .graph
                .dependencies_of(i)
                .max_by(|&a, &b| best[a].cmp(&best[b]).then(b.cmp(&a)));
            previous[i] = heaviest;
            best[i] = weight(&self.plan.stories[i]).saturating_add(heaviest.map_or(0, |u| best[u]));
        }
        let Some(end) = (0..n).max_by(|&a, &b| best[a].cmp(&best[b]).then(b.cmp(&a))) else {
            return CriticalPath {
                stories: Vec::new(),
                length: 0,
            };
        };
        let mut chain = vec![end];
        while let Some(before) = previous[chain[chain.len() - 1]] {
            chain.push(before);
        }
        chain.reverse();
        CriticalPath {
            stories: self.ids(chain),
            length: best[end],
        }
    }

    /// Each story's weight in milliseconds, from `duration` (at least 1, and capped at about 49
    /// days so that chains of them sum without overflow), with how many stories had a duration. A
    /// story without one weighs the mean of those with one; with none at all, every story
    /// weighs 1.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use epic_story_plan::{Story, StoryPlan};
    ///
    /// let plan = StoryPlan {
    ///     epic_id: "e".into(),
    ///     epic: String::new(),
    ///     stories: vec![
    ///         Story::new("a", "A", ["a"]).estimated("2s"),
    ///         Story::new("b", "B", ["b"]),
    ///         Story::new("c", "C", ["c"]).estimated("4s"),
    ///     ],
    /// }
    /// .validate()?;
    /// assert_eq!(plan.weights_by(Story::estimated_duration), (vec![2000, 3000, 4000], 2));
    /// assert_eq!(plan.weights_by(|_| None::<Duration>), (vec![1, 1, 1], 0));
    /// # Ok::<(), epic_story_plan::PlanErrors>(())
    /// ```
    pub fn weights_by(
        &self,
        duration: impl Fn(&Story) -> Option<std::time::Duration>,
    ) -> (Vec<u64>, usize) {
        let known: Vec<Option<u64>> = self
            .plan
            .stories
            .iter()
            .map(|story| {
                duration(story).map(|duration| {
                    u64::try_from(duration.as_millis())
                        .unwrap_or(u64::MAX)
                        .clamp(1, u64::from(u32::MAX))
                })
            })
            .collect();
        let seen: Vec<u64> = known.iter().flatten().copied().collect();
        let fallback = u64::try_from(seen.len())
            .ok()
            .filter(|&count| count > 0)
            .map_or(1, |count| (seen.iter().sum::<u64>() / count).max(1));
        let weights = known
            .into_iter()
            .map(|weight| weight.unwrap_or(fallback))
            .collect();
        (weights, seen.len())
    }

    /// For each story in plan order, the weight of the heaviest chain that starts with it and runs
    /// through its dependents: how much work at least still follows once it starts. The scheduler
    /// starts the ready story with the largest value first.
    pub fn remaining_chain_by(&self, weight: impl Fn(&Story) -> u64) -> Vec<u64> {
        let mut remaining = vec![0u64; self.plan.stories.len()];
        for i in self.topological().into_iter().rev() {
            let after = self
                .graph
                .dependents_of(i)
                .map(|d| remaining[d])
                .max()
                .unwrap_or(0);
            remaining[i] = weight(&self.plan.stories[i]).saturating_add(after);
        }
        remaining
    }
}
