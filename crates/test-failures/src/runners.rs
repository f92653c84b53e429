//! One reader per runner: the failing tests its lines name, the count it prints, and a line
//! saying it failed outside any test or stopped before every test ran.

use std::collections::BTreeSet;

use crate::failing::Runner;

/// What one runner's reader found in an output.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) runner: Runner,
    /// The failing tests it named.
    pub(crate) names: BTreeSet<String>,
    /// How many tests it says failed, when it says.
    pub(crate) counted: Option<usize>,
    /// A line saying it failed outside any test, or stopped before every test ran.
    pub(crate) outside: Option<String>,
}

impl Found {
    fn new(runner: Runner) -> Self {
        Self {
            runner,
            names: BTreeSet::new(),
            counted: None,
            outside: None,
        }
    }

    fn outside(&mut self, line: &str) {
        self.outside.get_or_insert_with(|| line.trim().to_owned());
    }
}

/// Every runner's reader on `lines`, in [`Runner`]'s order.
pub(crate) fn scan_all(lines: &[&str]) -> Vec<Found> {
    vec![
        pytest(lines),
        cargo_test(lines),
        nextest(lines),
        go_test(lines),
        jest(lines),
        vitest(lines),
    ]
}

/// The sum of the numbers of `items` (`2 failed`, `1 error`) whose word starts with one of
/// `words`; `None` when no item is a number and a word.
fn count(items: impl Iterator<Item = impl AsRef<str>>, words: &[&str]) -> Option<usize> {
    let mut total = None;
    for item in items {
        let Some((number, word)) = item.as_ref().trim().split_once(' ') else {
            continue;
        };
        let Ok(number) = number.parse::<usize>() else {
            continue;
        };
        let sum = total.get_or_insert(0);
        if words.iter().any(|w| word.trim_start().starts_with(w)) {
            *sum += number;
        }
    }
    total
}

/// pytest: the short summary's `FAILED id - message` and `ERROR id - message`, `-v`'s
/// `id FAILED`, and the last line's count (`2 failed, 1 error, 5 passed in 0.12s`). `-x`,
/// `--maxfail` and an error at collection stop it before every test ran.
fn pytest(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::Pytest);
    for line in lines {
        let trimmed = line.trim();
        if let Some(rest) = trimmed
            .strip_prefix("FAILED ")
            .or_else(|| trimmed.strip_prefix("ERROR "))
        {
            let id = rest.split(" - ").next().unwrap_or(rest).trim();
            if is_node_id(id) {
                found.names.insert(id.to_owned());
            }
            continue;
        }
        let mut words = trimmed.split_whitespace();
        if let (Some(id), Some("FAILED" | "ERROR")) = (words.next(), words.next())
            && id.contains("::")
        {
            found.names.insert(id.to_owned());
            continue;
        }
        if trimmed.starts_with('!')
            && (trimmed.contains("stopping after") || trimmed.contains("Interrupted:"))
        {
            found.outside(trimmed.trim_matches(|c: char| c == '!' || c == ' '));
            continue;
        }
        if let Some(counted) = pytest_count(trimmed) {
            found.counted = Some(counted);
        }
    }
    found
}

/// A pytest test id: one word with `::` (a test) or a `.py` file (a module that failed to
/// import).
fn is_node_id(id: &str) -> bool {
    !id.is_empty()
        && !id.contains(char::is_whitespace)
        && (id.contains("::") || id.to_ascii_lowercase().ends_with(".py"))
}

/// The failed and errored tests of pytest's last line (`=== 2 failed, 1 passed in 0.12s ===`),
/// if `line` is one.
fn pytest_count(line: &str) -> Option<usize> {
    const WORDS: [&str; 12] = [
        "failed",
        "passed",
        "skipped",
        "deselected",
        "xfailed",
        "xpassed",
        "warning",
        "warnings",
        "error",
        "errors",
        "rerun",
        "reruns",
    ];
    let line = line.trim_matches(|c: char| c == '=' || c == ' ');
    let (items, time) = line.rsplit_once(" in ")?;
    if !time.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let items: Vec<&str> = items.split(", ").collect();
    let every_item_counts = items.iter().all(|item| {
        item.split_once(' ')
            .is_some_and(|(number, word)| number.parse::<usize>().is_ok() && WORDS.contains(&word))
    });
    if !every_item_counts {
        return None;
    }
    count(items.iter(), &["failed", "error"])
}

/// `cargo test` (libtest): `test name ... FAILED`, the `failures:` list, each binary's
/// `test result: FAILED. 1 passed; 2 failed; …`. Without `--no-fail-fast` cargo stops at the
/// first failing binary, so only a run that ends with its `N targets failed:` list ran them
/// all; a build error, or a binary without its `test result:` line (it crashed), is a failure
/// outside any test.
fn cargo_test(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::CargoTest);
    let (mut running, mut results, mut failed) = (0usize, 0usize, 0usize);
    let (mut in_list, mut stopped, mut every_target) = (false, None, false);
    for line in lines {
        if in_list {
            if let Some(name) = line.strip_prefix("    ")
                && !name.starts_with(' ')
                && !name.is_empty()
            {
                found.names.insert(name.to_owned());
                continue;
            }
            in_list = false;
        }
        if *line == "failures:" {
            in_list = true;
        } else if let Some(rest) = line.strip_prefix("test ")
            && let Some((name, verdict)) = rest.rsplit_once(" ... ")
        {
            if verdict.starts_with("FAILED") {
                let name = name.strip_suffix(" - should panic").unwrap_or(name);
                found.names.insert(name.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("running ")
            && (rest.ends_with(" tests") || rest.ends_with(" test"))
        {
            running += 1;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            results += 1;
            failed += count(rest.split(['.', ';']), &["failed"]).unwrap_or(0);
        } else if line.starts_with("error: could not compile") || line.starts_with("error[E") {
            found.outside(line);
        } else if line.starts_with("error: test failed, to rerun pass") {
            stopped.get_or_insert(*line);
        } else if line.starts_with("error: ")
            && (line.ends_with(" targets failed:") || line.ends_with(" target failed:"))
        {
            every_target = true;
        }
    }
    if running > results {
        found.outside(
            "a test binary ended without its `test result:` line (it crashed or was killed)",
        );
    }
    if let Some(line) = stopped
        && !every_target
    {
        found.outside(&format!(
            "{line} (cargo stops at the first failing test binary: run it with --no-fail-fast)"
        ));
    }
    if results > 0 {
        found.counted = Some(failed);
    }
    found
}

/// The statuses nextest gives a test that did not pass.
const NEXTEST_FAILED: [&str; 11] = [
    "FAIL",
    "TIMEOUT",
    "SIGSEGV",
    "SIGABRT",
    "SIGBUS",
    "SIGILL",
    "SIGFPE",
    "SIGKILL",
    "SIGTERM",
    "ABORT",
    "LEAK-FAIL",
];

/// cargo nextest: `FAIL [   0.003s] crate::binary test` lines (and the other statuses of a test
/// that did not pass), counted by `Summary [ 0.5s] 10 tests run: 8 passed, 2 failed, …`. A run
/// cancelled at its first failure (nextest's default) did not run every test.
fn nextest(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::Nextest);
    for line in lines {
        let trimmed = line.trim();
        if let Some((status, rest)) = trimmed.split_once(" [")
            && NEXTEST_FAILED.contains(&status)
            && let Some((_, name)) = rest.split_once("] ")
        {
            // Newer versions print the test's place in the run first: `(3/10) crate test`.
            let name = match name.strip_prefix('(').and_then(|n| n.split_once(") ")) {
                Some((place, name)) if place.contains('/') => name,
                _ => name,
            };
            found.names.insert(name.trim().to_owned());
        } else if let Some(rest) = trimmed.strip_prefix("Summary [")
            && let Some((_, tally)) = rest.split_once("] ")
            && let Some((ran, items)) = tally.split_once(" run: ")
        {
            let ran = ran.trim_end_matches(" tests").trim_end_matches(" test");
            if let Some((done, all)) = ran.split_once('/')
                && done != all
            {
                found.outside(trimmed);
            }
            found.counted = count(items.split(", "), &["failed", "timed out", "leaky"]);
        } else if trimmed.starts_with("Cancelling due to test failure")
            || trimmed.starts_with("SETUP FAIL")
            || trimmed.starts_with("error: could not compile")
        {
            found.outside(trimmed);
        }
    }
    found
}

/// `go test`: `--- FAIL: Name (0.00s)` lines (subtests indented), each named with the package
/// of the `FAIL\tpackage\t0.01s` line after them. A package that failed without a failing test
/// (it did not build, its `TestMain` or `init` failed) is a failure outside any test.
fn go_test(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::GoTest);
    let mut pending: Vec<String> = Vec::new();
    for line in lines {
        if let Some(rest) = line.trim_start().strip_prefix("--- FAIL: ") {
            let name = rest.split(" (").next().unwrap_or(rest).trim();
            if !name.is_empty() {
                pending.push(name.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("FAIL\t") {
            let package = rest.split(['\t', ' ']).next().unwrap_or(rest);
            if rest.contains("[build failed]")
                || rest.contains("[setup failed]")
                || pending.is_empty()
            {
                found.outside(line);
            }
            found
                .names
                .extend(pending.drain(..).map(|name| format!("{package} {name}")));
        }
    }
    found.names.extend(pending);
    found
}

/// jest: each failure's heading, `● describe › test`, named with the file of the `FAIL file`
/// line above it, counted by `Tests:       2 failed, 5 passed, 7 total`. A suite that failed
/// to run, or a run stopped early (`--bail`: `1 of 3 total`), is a failure outside any test.
fn jest(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::Jest);
    let mut file: Option<&str> = None;
    for line in lines {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("FAIL ") {
            let rest = rest.trim();
            if !rest.contains(" > ") && !rest.ends_with(']') {
                file = rest.split_whitespace().next();
            }
        } else if trimmed.starts_with("PASS ") {
            file = None;
        } else if let Some(heading) = trimmed.strip_prefix("● ") {
            let heading = heading.trim();
            if heading == "Test suite failed to run" {
                found.outside(&format!("{}: {heading}", file.unwrap_or("a suite")));
            } else if !heading.starts_with("Console") && !heading.ends_with("Warning:") {
                found.names.insert(match file {
                    Some(file) => format!("{file} › {heading}"),
                    None => heading.to_owned(),
                });
            }
        } else if let Some(rest) = trimmed.strip_prefix("Tests:") {
            if rest.contains(" of ") {
                found.outside(trimmed);
            }
            found.counted = count(rest.split(','), &["failed"]);
        } else if trimmed.starts_with("Test Suites:") && trimmed.contains(" of ") {
            found.outside(trimmed);
        }
    }
    found
}

/// vitest: its `FAIL  file > describe > test` lines, counted by `Tests  2 failed | 5 passed
/// (7)`. A file that failed to load (`FAIL  file [ file ]`) is a failure outside any test.
fn vitest(lines: &[&str]) -> Found {
    let mut found = Found::new(Runner::Vitest);
    for line in lines {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("FAIL ") {
            let rest = rest.trim();
            if rest.contains(" > ") {
                found.names.insert(rest.to_owned());
            } else if rest.ends_with(" ]") && rest.contains(" [ ") {
                found.outside(trimmed);
            }
        } else if let Some(rest) = trimmed.strip_prefix("Tests ") {
            found.counted = count(rest.split('|'), &["failed"]);
        }
    }
    found
}
