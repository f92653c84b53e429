//! Validation: every violation of a plan, found in one pass.

use std::fmt;

use petgraph::algo::tarjan_scc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::graph::{Graph, ValidPlan};
use crate::path::{check_safe, normalize, overlaps_normalized, within_normalized};
use crate::{Story, StoryPlan};

/// The longest id the plan accepts, in bytes: ids name branches, directories and files.
pub(crate) const MAX_ID_LEN: usize = 64;

/// The stable name of a kind of violation, as docs/contract.md lists them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ViolationKind {
    /// Two stories share an id.
    DuplicateId,
    /// A story id or the epic id is not kebab-case or is too long.
    InvalidId,
    /// A story owns nothing.
    NoOwnedPaths,
    /// A story depends on itself.
    SelfDependency,
    /// A story depends on an id that is not in the plan.
    UnknownDependency,
    /// A story both owns a path and declares it (or a path above or below it) shared read-only.
    OwnedSharedOverlap,
    /// Two stories own overlapping paths.
    OwnedOverlap,
    /// A dependency cycle.
    Cycle,
    /// An owned or shared path that could reach outside the repository or into `.git`.
    UnsafePath,
    /// No stories.
    EmptyPlan,
    /// A story's `estimated_time` is not a positive duration.
    InvalidEstimate,
}

impl ViolationKind {
    /// The stable `snake_case` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DuplicateId => "duplicate_id",
            Self::InvalidId => "invalid_id",
            Self::NoOwnedPaths => "no_owned_paths",
            Self::SelfDependency => "self_dependency",
            Self::UnknownDependency => "unknown_dependency",
            Self::OwnedSharedOverlap => "owned_shared_overlap",
            Self::OwnedOverlap => "owned_overlap",
            Self::Cycle => "cycle",
            Self::UnsafePath => "unsafe_path",
            Self::EmptyPlan => "empty_plan",
            Self::InvalidEstimate => "invalid_estimate",
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing wrong with a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// Which rule is broken.
    pub kind: ViolationKind,
    /// A sentence naming the stories and paths involved.
    pub message: String,
    /// The ids of the stories involved, in plan order (the cycle's order for a cycle).
    pub stories: Vec<String>,
    /// The paths involved, as written in the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A plan that failed validation, with every violation found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PlanErrors {
    violations: Vec<Violation>,
}

impl PlanErrors {
    /// The violations, in the order [`StoryPlan::violations`] finds them.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.violations.len();
        write!(f, "plan is invalid ({n} violation{}):", plural(n))?;
        for violation in &self.violations {
            write!(f, "\n- {violation}")?;
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl StoryPlan {
    /// Checks the plan, returning it as a [`ValidPlan`] or with every violation at once.
    pub fn validate(self) -> Result<ValidPlan, PlanErrors> {
        let graph = Graph::new(&self);
        let violations = violations(&self, &graph);
        if violations.is_empty() {
            Ok(ValidPlan::new(self, graph))
        } else {
            Err(PlanErrors { violations })
        }
    }

    /// Every violation of the plan, in a stable order: the plan and epic id first, then each story
    /// in plan order, then overlaps between stories, then cycles.
    ///
    /// ```
    /// use epic_story_plan::{Story, StoryPlan, ViolationKind};
    /// let plan = StoryPlan {
    ///     epic_id: "shop".into(),
    ///     epic: String::new(),
    ///     stories: vec![
    ///         Story::new("a", "A", ["src/a"]).depending_on(["b"]),
    ///         Story::new("b", "B", ["src/a/inner"]).depending_on(["a"]),
    ///     ],
    /// };
    /// let kinds: Vec<_> = plan.violations().iter().map(|v| v.kind).collect();
    /// assert_eq!(kinds, [ViolationKind::OwnedOverlap, ViolationKind::Cycle]);
    /// assert_eq!(plan.violations()[1].message, "dependency cycle: a -> b -> a");
    /// ```
    pub fn violations(&self) -> Vec<Violation> {
        violations(self, &Graph::new(self))
    }
}

fn violations(plan: &StoryPlan, graph: &Graph) -> Vec<Violation> {
    let mut found = Vec::new();
    if plan.stories.is_empty() {
        found.push(Violation {
            kind: ViolationKind::EmptyPlan,
            message: "the plan has no stories: add at least one under `stories`".into(),
            stories: Vec::new(),
            paths: Vec::new(),
        });
    }
    if let Some(problem) = id_problem(&plan.epic_id) {
        found.push(Violation {
            kind: ViolationKind::InvalidId,
            message: format!("epic id {} {problem}", quote(&plan.epic_id)),
            stories: Vec::new(),
            paths: Vec::new(),
        });
    }
    for (i, story) in plan.stories.iter().enumerate() {
        check_story(graph, i, story, &mut found);
    }
    owned_overlaps(plan, &mut found);
    cycles(plan, graph, &mut found);
    found
}

fn check_story(graph: &Graph, i: usize, story: &Story, found: &mut Vec<Violation>) {
    let id = quote(&story.id);
    let mut violation = |kind, message, paths: Vec<String>| {
        found.push(Violation {
            kind,
            message,
            stories: vec![story.id.clone()],
            paths,
        });
    };
    if graph.index_of(&story.id) != Some(i) {
        violation(
            ViolationKind::DuplicateId,
            format!("duplicate story id {id}: ids must be unique"),
            Vec::new(),
        );
    }
    if let Some(problem) = id_problem(&story.id) {
        violation(
            ViolationKind::InvalidId,
            format!("story id {id} {problem}"),
            Vec::new(),
        );
    }
    if story.owned.is_empty() {
        violation(
            ViolationKind::NoOwnedPaths,
            format!(
                "story {id} owns no paths: list under `owned` the files or directories it may change"
            ),
            Vec::new(),
        );
    }
    for (field, paths) in [
        ("owns", &story.owned),
        ("declares shared read-only", &story.shared_read_only),
    ] {
        for path in paths {
            if let Err(why) = check_safe(path) {
                violation(
                    ViolationKind::UnsafePath,
                    format!("story {id} {field} {}, which is unsafe: {why}", quote(path)),
                    vec![path.clone()],
                );
            }
        }
    }
    if let Some(time) = &story.estimated_time
        && let Err(why) = crate::model::parse_estimate(time)
    {
        violation(
            ViolationKind::InvalidEstimate,
            format!("story {id} has estimated_time {}, which {why}", quote(time)),
            Vec::new(),
        );
    }
    let mut reported = std::collections::HashSet::new();
    for dependency in &story.depends_on {
        if !reported.insert(dependency.as_str()) {
            continue;
        }
        if *dependency == story.id {
            violation(
                ViolationKind::SelfDependency,
                format!("story {id} depends on itself"),
                Vec::new(),
            );
        } else if graph.index_of(dependency).is_none() {
            violation(
                ViolationKind::UnknownDependency,
                format!(
                    "story {id} depends on unknown story {}: no story in the plan has that id",
                    quote(dependency)
                ),
                Vec::new(),
            );
        }
    }
    let shared: Vec<(String, &String)> = story
        .shared_read_only
        .iter()
        .map(|raw| (normalize(raw), raw))
        .collect();
    for owned in &story.owned {
        let owned_norm = normalize(owned);
        for (shared_norm, shared_raw) in &shared {
            if overlaps_normalized(&owned_norm, shared_norm) {
                violation(
                    ViolationKind::OwnedSharedOverlap,
                    format!(
                        "story {id} both owns {} and declares {} shared read-only",
                        quote(owned),
                        quote(shared_raw)
                    ),
                    vec![owned.clone(), (*shared_raw).clone()],
                );
            }
        }
    }
}

/// Two stories must not own overlapping paths. Rather than comparing every pair of stories, the
/// owned paths are grouped by spelling and sorted segment by segment, which puts every path right
/// after its ancestors; one sweep with a stack of the current ancestors then finds each overlap.
/// The cost is `O(p log p)` for `p` owned paths, plus the overlaps reported.
fn owned_overlaps(plan: &StoryPlan, found: &mut Vec<Violation>) {
    // (normalised path, owning story indices in plan order, deduplicated)
    let mut owners: Vec<(String, Vec<usize>)> = Vec::new();
    {
        let mut entries: Vec<(Vec<u16>, String, usize)> = plan
            .stories
            .iter()
            .enumerate()
            .flat_map(|(i, story)| {
                story.owned.iter().map(move |path| {
                    let path = normalize(path);
                    (segment_order_key(&path), path, i)
                })
            })
            .collect();
        entries.sort_unstable_by(|(a, _, i), (b, _, j)| a.cmp(b).then(i.cmp(j)));
        for (_, path, story) in entries {
            match owners.last_mut() {
                Some((last, stories)) if *last == path => {
                    if stories.last() != Some(&story) {
                        stories.push(story);
                    }
                }
                _ => owners.push((path, vec![story])),
            }
        }
    }

    let id = |i: usize| plan.stories[i].id.clone();
    let mut ancestors: Vec<usize> = Vec::new(); // indices into `owners`
    for current in 0..owners.len() {
        let (path, stories) = &owners[current];
        while let Some(&top) = ancestors.last() {
            if within_normalized(path, &owners[top].0) {
                break;
            }
            ancestors.pop();
        }
        if stories.len() > 1 {
            let names: Vec<String> = stories.iter().map(|&i| id(i)).collect();
            let both = if names.len() == 2 { "both" } else { "all" };
            found.push(Violation {
                kind: ViolationKind::OwnedOverlap,
                message: format!("stories {} {both} own {}", list(&names), quote(path)),
                stories: names,
                paths: vec![path.clone()],
            });
        }
        for &above in &ancestors {
            let (above_path, above_stories) = &owners[above];
            let distinct = above_stories.iter().any(|a| stories.iter().any(|b| a != b));
            if !distinct {
                continue;
            }
            let mut involved: Vec<usize> = above_stories.iter().chain(stories).copied().collect();
            involved.sort_unstable();
            involved.dedup();
            let names: Vec<String> = involved.into_iter().map(id).collect();
            let message = if above_stories.len() == 1 && stories.len() == 1 {
                format!(
                    "stories {} and {} both own {} / {}",
                    quote(&id(above_stories[0])),
                    quote(&id(stories[0])),
                    quote(above_path),
                    quote(path)
                )
            } else {
                format!(
                    "stories {} own overlapping paths {} / {}",
                    list(&names),
                    quote(above_path),
                    quote(path)
                )
            };
            found.push(Violation {
                kind: ViolationKind::OwnedOverlap,
                message,
                stories: names,
                paths: vec![above_path.clone(), path.clone()],
            });
        }
        ancestors.push(current);
    }
}

/// A key whose plain ordering is the segment-by-segment ordering of paths, so that `a/b` sorts
/// right after `a` and before `a-b`: the separator becomes 0 and every other byte moves up by one,
/// making `/` sort below anything a segment can hold. Built once per path, it keeps the sort a
/// plain slice comparison.
fn segment_order_key(path: &str) -> Vec<u16> {
    path.bytes()
        .map(|b| if b == b'/' { 0 } else { u16::from(b) + 1 })
        .collect()
}

/// Each dependency cycle once: the strongly connected components with more than one story (found
/// with petgraph), each reported as its shortest cycle through its earliest story, following
/// `depends_on` from that story.
fn cycles(plan: &StoryPlan, graph: &Graph, found: &mut Vec<Violation>) {
    let mut components: Vec<Vec<usize>> = tarjan_scc(graph.edges())
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut members: Vec<usize> = component
                .into_iter()
                .map(petgraph::graph::NodeIndex::index)
                .collect();
            members.sort_unstable();
            members
        })
        .collect();
    components.sort_unstable_by_key(|members| members[0]);

    for members in components {
        let start = members[0];
        let mut in_component = vec![false; plan.stories.len()];
        for &m in &members {
            in_component[m] = true;
        }
        // Breadth-first along `depends_on`, in each story's own order, back to `start`.
        let mut parent: Vec<Option<usize>> = vec![None; plan.stories.len()];
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(i) = queue.pop_front() {
            for dependency in &plan.stories[i].depends_on {
                let Some(d) = graph.index_of(dependency) else {
                    continue;
                };
                if !in_component[d] || d == i {
                    continue;
                }
                if d == start {
                    closing = Some(i);
                    break 'search;
                }
                if parent[d].is_none() {
                    parent[d] = Some(i);
                    queue.push_back(d);
                }
            }
        }
        let mut chain = Vec::new();
        let mut at = closing;
        while let Some(i) = at {
            chain.push(i);
            at = if i == start { None } else { parent[i] };
        }
        chain.reverse();
        chain.push(start);
        let ids: Vec<String> = chain.iter().map(|&i| plan.stories[i].id.clone()).collect();
        found.push(Violation {
            kind: ViolationKind::Cycle,
            message: format!("dependency cycle: {}", ids.join(" -> ")),
            stories: ids[..ids.len() - 1].to_vec(),
            paths: Vec::new(),
        });
    }
}

/// What is wrong with an id, if anything: kebab-case `^[a-z0-9][a-z0-9-]*$`, at most
/// [`MAX_ID_LEN`] bytes.
fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("is empty: ids are kebab-case, like `cart-api`".into());
    }
    if id.len() > MAX_ID_LEN {
        return Some(format!(
            "is {} bytes long: ids are at most {MAX_ID_LEN}",
            id.len()
        ));
    }
    let kebab = id
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-');
    (!kebab).then(|| {
        "is not kebab-case: use lowercase letters, digits and `-`, starting with a letter or digit"
            .into()
    })
}

/// An id or path quoted for a message: control characters escaped, very long values cut.
fn quote(value: &str) -> String {
    const SHOWN: usize = 80;
    let mut out = String::from("'");
    for (n, c) in value.chars().enumerate() {
        if n == SHOWN {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
fn list(ids: &[String]) -> String {
    let quoted: Vec<String> = ids.iter().map(|id| quote(id)).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::segment_order_key;

    #[test]
    fn key_order_is_segment_order() {
        let mut paths = vec![
            "a-b", "a/b/c", "a", "a/b", "a.b/x", "a/c", "b", "a/b-c", "a/b/c/d",
        ];
        paths.sort_by_key(|p| segment_order_key(p));
        let mut by_segments = paths.clone();
        by_segments.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        assert_eq!(paths, by_segments);
        assert_eq!(paths[..5], ["a", "a/b", "a/b/c", "a/b/c/d", "a/b-c"]);
    }
}
