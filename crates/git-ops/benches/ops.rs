//! git-ops against the git command line doing the same, on a generated repository of 20,000
//! files in 2,000 directories, on tmpfs (`/dev/shm`) and on the ordinary disk (the system's
//! temporary directory), as ratios measured in one run.
//!
//! Targets: the reads the executor repeats for every story (status, changed paths, rev-parse,
//! branch exists, is-ancestor) at least 2× faster than spawning git (ratio ≤ 0.5); the writes
//! (worktree add, merge, commit, rollback) no slower than git (ratio ≤ 1.1). Reads use one warm
//! [`GixGit`] handle, as the executor keeps one for the whole run.
//!
//! Prints a Markdown section for `cargo xtask bench` to put in BENCHMARKS.md. `--quick` takes
//! fewer samples.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use epic_git_ops::{Git, GixGit, MergeFavor};
use epic_test_support::{Isolation, Repo, write};

const DIRS: usize = 2_000;
const FILES_PER_DIR: usize = 10;
/// Files a story changes: what the commit and the merge carry.
const STORY_FILES: usize = 200;

/// The isolated environment of every git this benchmark runs, baseline and setup alike:
/// `epic-test-support`'s isolation, in the C locale.
struct Env {
    isolation: Isolation,
}

impl Env {
    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        self.isolation.command(dir, args)
    }

    /// Runs git; panics unless it succeeds.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.isolation.run(dir, args)
    }

    /// Runs git, whatever its exit code (the baseline of `merge-base --is-ancestor`, `rev-parse
    /// --verify --quiet`).
    fn git_status(&self, dir: &Path, args: &[&str]) {
        self.command(dir, args).output().expect("run git");
    }

    fn handle(&self, dir: &Path) -> GixGit {
        let mut git = GixGit::discover(dir).expect("discover");
        for (key, value) in self.isolation.variables() {
            git = git.with_env(key, value);
        }
        git
    }
}

fn file(dir: usize, file: usize) -> String {
    format!("src/d{dir:04}/f{file}.txt")
}

/// Changes the first file of `STORY_FILES` directories starting at `first_dir`.
fn touch_story_files(root: &Path, first_dir: usize, tag: &str) {
    for dir in first_dir..first_dir + STORY_FILES {
        write(
            &root.join(file(dir % DIRS, 0)),
            format!("changed by {tag} in directory {dir}\n"),
        );
    }
}

/// The middle sample in `order` (durations or ratios).
fn median<T: Copy + Default>(
    mut samples: Vec<T>,
    order: impl FnMut(&T, &T) -> std::cmp::Ordering,
) -> T {
    samples.sort_unstable_by(order);
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// One measured pair: git-ops and the git CLI.
struct Row {
    name: &'static str,
    timing: Timing,
    kind: Kind,
}

/// Both sides' medians, and the median of the ratios of the runs made side by side: a burst of
/// load on the shared machine, or a slow stretch of the disk, weighs on one sample's two runs
/// alike, and the ratio of that sample stands.
struct Timing {
    ours: Duration,
    git: Duration,
    ratio: f64,
}

impl Timing {
    /// From the two sides' runs, sample by sample.
    fn of(ours: Vec<Duration>, git: Vec<Duration>) -> Self {
        let ratios: Vec<f64> = ours
            .iter()
            .zip(&git)
            .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64().max(1e-9))
            .collect();
        Self {
            ours: median(ours, Ord::cmp),
            git: median(git, Ord::cmp),
            ratio: median(ratios, f64::total_cmp),
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Read,
    Write,
    Info,
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

/// The file system type of the mount that holds `path`, from `/proc/mounts`.
fn fs_type(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let point = fields.next()?;
            let kind = fields.next()?;
            path.starts_with(point)
                .then(|| (point.len(), kind.to_owned()))
        })
        .max_by_key(|(len, _)| *len)
        .map_or_else(|| "unknown".into(), |(_, kind)| kind)
}

struct Bench {
    env: Env,
    repo: PathBuf,
    story: PathBuf,
    root: PathBuf,
    samples: usize,
}

impl Bench {
    /// Generates the repository under `base`: `main`/`epic` with 20,000 files, a story branch
    /// with `STORY_FILES` changed files in its own worktree, and an epic commit beside it.
    fn setup(base: &Path, samples: usize) -> (Repo, Self) {
        let generated = Repo::builder()
            .prefix("git-ops-bench-")
            .within(base)
            .branch("epic")
            .no_commit()
            .build();
        let root = generated.root().to_owned();
        let env = Env {
            isolation: generated.isolation().clone(),
        };
        let repo = generated.path().to_owned();
        for d in 0..DIRS {
            for f in 0..FILES_PER_DIR {
                write(
                    &repo.join(file(d, f)),
                    format!("file {f} of directory {d}\nsome content to diff\n"),
                );
            }
        }
        env.git(&repo, &["add", "-A"]);
        env.git(&repo, &["commit", "-q", "-m", "generated"]);
        let story = root.join("story");
        let story_arg = story.to_str().expect("utf-8 path");
        env.git(
            &repo,
            &["worktree", "add", "-q", "-b", "story", story_arg, "epic"],
        );
        touch_story_files(&story, 0, "story");
        env.git(&story, &["add", "-A"]);
        env.git(&story, &["commit", "-q", "-m", "story work"]);
        // The epic moves on meanwhile: merges are three-way.
        touch_story_files(&repo, 1_000, "epic");
        env.git(&repo, &["add", "-A"]);
        env.git(&repo, &["commit", "-q", "-m", "another story"]);
        let bench = Self {
            env,
            repo,
            story,
            root,
            samples,
        };
        (generated, bench)
    }

    fn reads(&self, git: &GixGit, rows: &mut Vec<Row>) {
        let env = &self.env;
        let story = &self.story;
        // A story at work: some edits and new files on top of its commits.
        for i in 0..10 {
            write(&story.join(file(500 + i, 1)), "uncommitted edit\n");
            write(&story.join(format!("new/untracked{i}.txt")), "new\n");
        }
        self.statuses(git, rows);
        let n = self.samples * 3;
        let nothing = || {};

        let timing = pair(
            n,
            |_| {
                let paths = git
                    .changed_paths_vs_base(story, "epic", "HEAD")
                    .expect("paths");
                assert_eq!(paths.len(), STORY_FILES);
            },
            |_| {
                env.git(story, &["diff", "--name-only", "epic...HEAD"]);
            },
            nothing,
        );
        rows.push(Row {
            name: "changed paths (three-dot, 200 files)",
            timing,
            kind: Kind::Read,
        });

        let timing = pair(
            n,
            |_| {
                git.rev_parse(story, "epic").expect("rev-parse");
            },
            |_| {
                env.git(story, &["rev-parse", "epic"]);
            },
            nothing,
        );
        rows.push(Row {
            name: "rev-parse",
            timing,
            kind: Kind::Read,
        });

        let timing = pair(
            n,
            |_| assert!(git.branch_exists("story").expect("exists")),
            |_| {
                env.git_status(
                    story,
                    &["rev-parse", "--verify", "--quiet", "refs/heads/story"],
                );
            },
            nothing,
        );
        rows.push(Row {
            name: "branch exists",
            timing,
            kind: Kind::Read,
        });

        let timing = pair(
            n,
            |_| {
                git.is_ancestor(story, "epic~1", "HEAD").expect("ancestry");
            },
            |_| env.git_status(story, &["merge-base", "--is-ancestor", "epic~1", "HEAD"]),
            nothing,
        );
        rows.push(Row {
            name: "is-ancestor",
            timing,
            kind: Kind::Read,
        });

        env.git(story, &["reset", "-q", "--hard"]);
        env.git(story, &["clean", "-q", "-fd"]);
    }

    /// Statuses of the story worktree holding 20 changes: repeated, after one more edit, and
    /// the first of a worktree.
    fn statuses(&self, git: &GixGit, rows: &mut Vec<Row>) {
        let env = &self.env;
        let story = &self.story;
        // Warm both: the first status after a checkout refreshes racy index entries.
        git.status(story, &[]).expect("status");
        env.git(story, &["status", "--porcelain"]);
        let n = self.samples * 3;
        let nothing = || {};

        let timing = pair(
            n,
            |_| assert!(git.status(story, &[]).expect("status").is_dirty()),
            |_| {
                env.git(story, &["status", "--porcelain", "--untracked-files=all"]);
            },
            nothing,
        );
        rows.push(Row {
            name: "status (20 changes)",
            timing,
            kind: Kind::Read,
        });

        // What the executor does after an agent's turn: files written, then a status.
        let edited = story.join(file(700, 2));
        let timing = pair(
            n,
            |i| {
                write(&edited, format!("edit {i} of ours\n"));
                assert!(git.status(story, &[]).expect("status").is_dirty());
            },
            |i| {
                write(&edited, format!("edit {i} of git\n"));
                env.git(story, &["status", "--porcelain", "--untracked-files=all"]);
            },
            nothing,
        );
        rows.push(Row {
            name: "status after one more edit (both include the write)",
            timing,
            kind: Kind::Read,
        });

        // A worktree's first status: a new handle, nothing watched or remembered yet.
        let timing = pair(
            self.samples,
            |_| {
                let cold = env.handle(story);
                assert!(cold.status(story, &[]).expect("status").is_dirty());
            },
            |_| {
                env.git(story, &["status", "--porcelain", "--untracked-files=all"]);
            },
            nothing,
        );
        rows.push(Row {
            name: "status, a worktree's first (new handle, nothing watched yet)",
            timing,
            kind: Kind::Info,
        });
    }

    fn commit(&self, git: &GixGit, rows: &mut Vec<Row>) {
        let env = &self.env;
        let story = &self.story;
        touch_story_files(story, 200, "warm-up");
        git.status(story, &[]).expect("status");
        env.git(story, &["reset", "-q", "--hard"]);
        let timing = pair(
            self.samples,
            |i| {
                touch_story_files(story, 200, &format!("ours {i}"));
                git.commit_all(story, "ours").expect("commit");
            },
            |i| {
                touch_story_files(story, 200, &format!("git {i}"));
                env.git(story, &["add", "-A"]);
                env.git(story, &["commit", "-q", "-m", "git"]);
            },
            || {
                env.git(story, &["reset", "-q", "--hard", "HEAD~1"]);
            },
        );
        rows.push(Row {
            name: "commit all (200 files; both include writing them)",
            timing,
            kind: Kind::Write,
        });
    }

    fn merge_and_rollback(&self, git: &GixGit, rows: &mut Vec<Row>) {
        let env = &self.env;
        let repo = &self.repo;
        let checkpoint = git.checkpoint(repo).expect("checkpoint");
        let hex = checkpoint.to_hex();
        let reset = || {
            env.git(repo, &["reset", "-q", "--hard", &hex]);
        };
        let timing = pair(
            self.samples,
            |_| {
                let outcome = git
                    .merge(repo, "story", "merge story", MergeFavor::None)
                    .expect("merge");
                assert!(
                    matches!(outcome, epic_git_ops::MergeOutcome::Merged(_)),
                    "{outcome:?}"
                );
            },
            |_| {
                env.git(
                    repo,
                    &["merge", "-q", "--no-ff", "-m", "merge story", "story"],
                );
            },
            reset,
        );
        rows.push(Row {
            name: "merge --no-ff (200 files)",
            timing,
            kind: Kind::Write,
        });

        let dirty = || {
            env.git(
                repo,
                &["merge", "-q", "--no-ff", "-m", "merge story", "story"],
            );
            for i in 0..5 {
                write(&repo.join(format!("gate-output/{i}.txt")), "left behind\n");
            }
        };
        dirty();
        let timing = pair(
            self.samples,
            |_| git.rollback(repo, &checkpoint).expect("rollback"),
            |_| {
                env.git(repo, &["reset", "-q", "--hard", &hex]);
                env.git(repo, &["clean", "-q", "-fd"]);
            },
            dirty,
        );
        reset();
        env.git(repo, &["clean", "-q", "-fd"]);
        rows.push(Row {
            name: "rollback (reset --hard + clean, 200 files)",
            timing,
            kind: Kind::Write,
        });
    }

    fn worktree_add(&self, git: &GixGit, samples: usize, rows: &mut Vec<Row>) {
        let env = &self.env;
        let repo = &self.repo;
        let path = |who: &str, i: usize| self.root.join(format!("wt-{who}-{i}"));
        let mut removes = (Vec::new(), Vec::new());
        let timing = pair(
            samples,
            |i| {
                git.add_worktree_new_branch(&path("ours", i), &format!("bench/ours-{i}"), "epic")
                    .expect("add");
            },
            |i| {
                let target = path("git", i);
                env.git(
                    repo,
                    &[
                        "worktree",
                        "add",
                        "-q",
                        "-b",
                        &format!("bench/git-{i}"),
                        target.to_str().expect("utf-8"),
                        "epic",
                    ],
                );
            },
            || {},
        );
        rows.push(Row {
            name: "worktree add -b (20,000 files)",
            timing,
            kind: Kind::Write,
        });
        for i in 0..samples {
            settle();
            let start = Instant::now();
            git.remove_worktree(&path("ours", i)).expect("remove");
            removes.0.push(start.elapsed());
            let target = path("git", i);
            settle();
            let start = Instant::now();
            env.git(
                repo,
                &[
                    "worktree",
                    "remove",
                    "--force",
                    target.to_str().expect("utf-8"),
                ],
            );
            removes.1.push(start.elapsed());
        }
        rows.push(Row {
            name: "worktree remove --force",
            timing: Timing::of(removes.0, removes.1),
            kind: Kind::Info,
        });
    }
}

/// Writes every dirty page back (`sync`), so the next timed run does not pay for the last.
fn settle() {
    Command::new("sync").status().expect("run sync");
}

/// Runs `ours` and `theirs` alternately, `samples` times each, with `reset` (not timed)
/// after each run; returns their medians and the median of their ratios.
fn pair(
    samples: usize,
    mut ours: impl FnMut(usize),
    mut theirs: impl FnMut(usize),
    mut reset: impl FnMut(),
) -> Timing {
    let mut a = Vec::with_capacity(samples);
    let mut b = Vec::with_capacity(samples);
    // Each side goes first in every other sample, and every run starts with nothing left to
    // write back: what one run leaves behind (dirty pages above all, on the disk) weighs on
    // neither side.
    for i in 0..samples {
        for side in [i % 2, 1 - i % 2] {
            settle();
            let start = Instant::now();
            if side == 0 {
                ours(i);
                a.push(start.elapsed());
            } else {
                theirs(i);
                b.push(start.elapsed());
            }
            reset();
        }
    }
    Timing::of(a, b)
}

fn table(out: &mut String, rows: &[Row]) {
    out.push_str(
        "| operation | git-ops | git CLI | ratio (git-ops / git, per sample) | target | met |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | --- | --- |\n");
    for row in rows {
        let ratio = row.timing.ratio;
        let (target, met) = match row.kind {
            Kind::Read => ("≤ 0.5 (2× faster)", ratio <= 0.5),
            Kind::Write => ("≤ 1.1", ratio <= 1.1),
            Kind::Info => ("—", true),
        };
        let met = match row.kind {
            Kind::Info => "—",
            _ if met => "yes",
            _ => "**no**",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {ratio:.2} | {target} | {met} |",
            row.name,
            ms(row.timing.ours),
            ms(row.timing.git)
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other runner (`cargo test --all-targets`) gets a note
    // instead of minutes of measuring.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("git-ops: a benchmark; run it with `cargo xtask bench git-ops`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let samples = if quick { 3 } else { 11 };
    let mut out = String::new();
    out.push_str("## git-ops: gix and the git CLI against the git CLI\n\n");
    let _ = writeln!(
        out,
        "A generated repository of {} files in {DIRS} directories; a story branch changing \
         {STORY_FILES} files; the epic one commit ahead of the story's start. Medians of {} runs \
         for writes, {} for reads, git-ops and git taking turns to go first, each run after a `sync`; \
         the ratio is the median of each sample's ratio. git-ops reads use one warm handle.\n",
        DIRS * FILES_PER_DIR,
        samples,
        samples * 3
    );
    let mut places: Vec<(String, PathBuf)> = Vec::new();
    if Path::new("/dev/shm").is_dir() {
        places.push(("tmpfs".into(), PathBuf::from("/dev/shm")));
    }
    places.push(("ordinary disk".into(), std::env::temp_dir()));
    for (label, base) in places {
        let start = Instant::now();
        let (_dir, bench) = Bench::setup(&base, samples);
        let setup = start.elapsed();
        let git = bench.env.handle(&bench.repo);
        let mut rows = Vec::new();
        bench.reads(&git, &mut rows);
        bench.commit(&git, &mut rows);
        bench.merge_and_rollback(&git, &mut rows);
        // The same git command on both sides: per-sample ratios spread widely, so more samples.
        bench.worktree_add(&git, samples * 2 - 1, &mut rows);
        let _ = writeln!(
            out,
            "### {label}: `{}` ({}; setup {:.1} s)\n",
            base.display(),
            fs_type(&base),
            setup.as_secs_f64()
        );
        table(&mut out, &rows);
        out.push('\n');
    }
    out.push_str(NOTES);
    print!("{out}");
}

/// Why the figures are what they are, misses included.
const NOTES: &str = "\
Notes:

- **status** repeats on a worktree a file-system monitor watches (inotify, `src/monitor.rs`): \
the status drains the kernel's queue of changes and reads and stats only what it names, instead \
of reading all 2,000 directories and statting all 20,000 files as `git status` does. What is left \
is the fixed cost: walking the index's 20,000 entries against the kept listings, the 10 edited \
files read and compared, and gix's pathspec-limited walk of the new directory of 10 untracked \
files. The row after it adds one more write before each status, both sides: the executor's \
pattern after an agent's turn. A worktree's *first* status (a new handle, nothing watched yet) \
does the full walk on both cores and sets up the watches; it costs about what `git status` does \
(an earlier profile put two thirds of the walk in the `getdents`/`statx` calls themselves), and \
it happens once per worktree. Without a monitor (a network file system, no inotify), every \
status is that walk: 0.8–0.95× of git, measured by disabling the monitor.
- **changed paths** is a merge base plus two tree diffs in process against git's spawn plus the \
same diffs. git-ops keeps its thread-local gix handles warm per worktree, so repeated diffs over \
the same trees (the executor diffs a story against the same epic head several times) find them \
in the object cache instead of reading and inflating loose objects again.
- **rev-parse, branch exists, is-ancestor** are pure reads of refs and a few commits: the cost \
of spawning git is the whole difference.
- **commit all** stages the paths the status found with `git update-index` and commits with \
`git write-tree`, `git commit-tree` and `git update-ref`, where `git add -A` and `git commit` \
each refresh all 20,000 tracked files first: four short git processes instead of two long ones.
- **merge, rollback, worktree add** run git itself (see the crate docs), so they sit near 1.0. A \
merge first asks gix whether it conflicts: a tree-diff check of the two sides (a few ms) when \
they touch separate files, a full in-memory tree merge (about 20 ms here) otherwise; a conflict \
then costs no worktree writes at all. Merges also run one `git config` (about 2 ms) to choose the \
fallback identity, so on a noisy disk the merge ratio wanders around the 1.1 line. A worktree \
add is the very same `git worktree add` on both sides; what git-ops does around it (a branch \
lookup, a rev-parse, a lock) measured about 0.1 ms of its 200 ms. Yet one sample's ratio ranges \
from 0.6 to 1.5 on this shared machine, so the row takes twice the samples and its median still \
moves by about ±0.1 from run to run.
";
