//! Merge bases and ancestry walked in order of generation numbers, as git walks them with a
//! commit-graph.
//!
//! gix's merge base orders its walk by commit time where the repository has no commit-graph
//! (epic's writes none), and an epic's commits share their seconds: a story's commit, the
//! epic's merge of it and the next story's are made within one. With equal times the walk
//! cannot tell the newer commit from the older and goes on down the history: each merge base of
//! a story and the epic head read every commit the epic ever made, so each story cost more the
//! more stories came before it.
//!
//! Here every commit has its generation (one more than its parents' highest; 1 for a root),
//! taken from the commit-graph where one holds the commit and otherwise computed from its
//! parents', and kept for the process's life: a commit's id fixes its parents, so its
//! generation never changes, and a new commit's costs a look at its parents. The walk takes the
//! highest generation first, which is git's paint-down-to-common: once it has passed below the
//! common ancestors nothing it meets can be a better one, and it stops, having read only the
//! commits above them. Without a commit-graph the first question of a process reads the
//! history once; after that each costs what is new.

use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

/// Each commit's generation known so far (see the module docs): one map for the process, as
/// commit ids are the same facts in every repository.
static GENERATIONS: Mutex<Option<HashMap<gix::ObjectId, u32>>> = Mutex::new(None);

/// A commit as the walk reads it.
struct Read {
    parents: Vec<gix::ObjectId>,
    time: i64,
}

fn read(repo: &gix::Repository, id: gix::ObjectId) -> Result<Option<Read>, gix::Error> {
    // A parent that is not there (a shallow clone's boundary) is where the history ends, as a
    // graft makes it for git.
    let Some(object) = repo.try_find_object(id)? else {
        return Ok(None);
    };
    let commit = object.try_into_commit()?;
    let parents = commit.parent_ids().map(gix::Id::detach).collect();
    let time = commit.time()?.seconds;
    Ok(Some(Read { parents, time }))
}

/// The generation of the commit `id` of `repo`; 0 for a commit that is not there.
fn generation(repo: &gix::Repository, id: gix::ObjectId) -> Result<u32, gix::Error> {
    let mut guard = GENERATIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = guard.get_or_insert_with(HashMap::new);
    if let Some(&generation) = known.get(&id) {
        return Ok(generation);
    }
    let graph = repo.commit_graph_if_enabled().ok().flatten();
    let from_graph = |id: &gix::ObjectId| {
        graph
            .as_ref()
            .and_then(|graph| graph.commit_by_id(id))
            .map(|commit| commit.generation())
    };
    // Depth first, without recursion: a commit is settled once all its parents are.
    let mut stack = vec![id];
    let mut parents_of: HashMap<gix::ObjectId, Vec<gix::ObjectId>> = HashMap::new();
    while let Some(&top) = stack.last() {
        if known.contains_key(&top) {
            stack.pop();
            continue;
        }
        if let Some(generation) = from_graph(&top) {
            known.insert(top, generation);
            stack.pop();
            continue;
        }
        let parents = match parents_of.get(&top) {
            Some(parents) => parents.clone(),
            None => match read(repo, top)? {
                Some(commit) => commit.parents,
                None => {
                    known.insert(top, 0);
                    stack.pop();
                    continue;
                }
            },
        };
        let missing: Vec<gix::ObjectId> = parents
            .iter()
            .filter(|parent| !known.contains_key(*parent))
            .copied()
            .collect();
        if missing.is_empty() {
            let highest = parents.iter().filter_map(|parent| known.get(parent)).max();
            known.insert(top, highest.map_or(1, |highest| highest.saturating_add(1)));
            parents_of.remove(&top);
            stack.pop();
        } else {
            parents_of.insert(top, parents);
            stack.extend(missing);
        }
    }
    Ok(known.get(&id).copied().unwrap_or_default())
}

/// Reached from the first commit.
const ONE: u8 = 1;
/// Reached from the second commit.
const TWO: u8 = 2;
/// Below a common ancestor: no merge base.
const STALE: u8 = 4;
/// A merge base found.
const RESULT: u8 = 8;

/// A commit in the walk's queue: the highest generation first, then the newest.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    generation: u32,
    time: i64,
    id: gix::ObjectId,
}

/// The best common ancestors of `one` and `two` (none of them reaches another), newest first;
/// empty for unrelated histories. What `git merge-base --all one two` names.
pub(crate) fn merge_bases(
    repo: &gix::Repository,
    one: gix::ObjectId,
    two: gix::ObjectId,
) -> Result<Vec<gix::ObjectId>, gix::Error> {
    if one == two {
        return Ok(vec![one]);
    }
    let found = paint_down(repo, one, &[two])?;
    // A base another base reaches is not a best one (histories with criss-cross merges).
    let mut best = Vec::new();
    for (at, &(candidate, _)) in found.iter().enumerate() {
        let mut reached = false;
        for (other_at, &(other, _)) in found.iter().enumerate() {
            if other_at != at && reaches(repo, other, candidate)? {
                reached = true;
                break;
            }
        }
        if !reached {
            best.push(candidate);
        }
    }
    Ok(best)
}

/// git's paint-down-to-common: the common ancestors of `one` and each of `others` that the walk
/// finds above every other common ancestor, newest first, with their times.
fn paint_down(
    repo: &gix::Repository,
    one: gix::ObjectId,
    others: &[gix::ObjectId],
) -> Result<Vec<(gix::ObjectId, i64)>, gix::Error> {
    let mut flags: HashMap<gix::ObjectId, u8> = HashMap::new();
    let mut times: HashMap<gix::ObjectId, i64> = HashMap::new();
    let mut queue = BinaryHeap::new();
    let mut push = |queue: &mut BinaryHeap<Queued>,
                    flags: &mut HashMap<gix::ObjectId, u8>,
                    id: gix::ObjectId,
                    with: u8|
     -> Result<bool, gix::Error> {
        let now = flags.entry(id).or_default();
        if *now & with == with {
            return Ok(false);
        }
        *now |= with;
        let Some(commit) = read(repo, id)? else {
            return Ok(false);
        };
        times.insert(id, commit.time);
        queue.push(Queued {
            generation: generation(repo, id)?,
            time: commit.time,
            id,
        });
        Ok(true)
    };
    push(&mut queue, &mut flags, one, ONE)?;
    for &other in others {
        push(&mut queue, &mut flags, other, TWO)?;
    }
    let mut found = Vec::new();
    // As git: on while anything queued is not below a common ancestor (the queue stays small).
    while queue
        .iter()
        .any(|queued| flags.get(&queued.id).is_none_or(|these| these & STALE == 0))
    {
        let Some(Queued { id, .. }) = queue.pop() else {
            break;
        };
        let mut these = flags.get(&id).copied().unwrap_or_default();
        let mut paint = these & (ONE | TWO | STALE);
        if paint == ONE | TWO {
            if these & RESULT == 0 {
                these |= RESULT;
                flags.insert(id, these);
                found.push(id);
            }
            paint |= STALE;
        }
        let parents = read(repo, id)?
            .map(|commit| commit.parents)
            .unwrap_or_default();
        for parent in parents {
            push(&mut queue, &mut flags, parent, paint)?;
        }
    }
    // Found, then painted stale from a better one found later: not a merge base.
    let mut bases: Vec<(gix::ObjectId, i64)> = found
        .into_iter()
        .filter(|id| flags.get(id).is_none_or(|these| these & STALE == 0))
        .map(|id| (id, times.get(&id).copied().unwrap_or_default()))
        .collect();
    bases.sort_by_key(|base| std::cmp::Reverse(base.1));
    Ok(bases)
}

/// Whether `ancestor` is reachable from `descendant` (or is it): a walk down from `descendant`
/// that never goes below `ancestor`'s generation.
pub(crate) fn reaches(
    repo: &gix::Repository,
    descendant: gix::ObjectId,
    ancestor: gix::ObjectId,
) -> Result<bool, gix::Error> {
    if ancestor == descendant {
        return Ok(true);
    }
    let floor = generation(repo, ancestor)?;
    if floor == 0 || generation(repo, descendant)? <= floor {
        return Ok(false);
    }
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![descendant];
    while let Some(id) = stack.pop() {
        let Some(commit) = read(repo, id)? else {
            continue;
        };
        for parent in commit.parents {
            if parent == ancestor {
                return Ok(true);
            }
            if seen.insert(parent) && generation(repo, parent)? > floor {
                stack.push(parent);
            }
        }
    }
    Ok(false)
}
