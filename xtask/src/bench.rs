//! `cargo xtask bench`: runs every benchmark and rewrites its section of `BENCHMARKS.md`.
//!
//! A benchmark is a cargo bench target (`harness = false`) that prints a Markdown section to
//! stdout: its figures, measured as ratios within one run because these machines are shared and
//! noisy. xtask adds the command that produced it and the machine, and replaces the section
//! between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, leaving the rest of the file alone.
//!
//! `cargo xtask bench tokens` is the real-CLI tier's (`crates/tier`, run as `cargo run -p
//! epic-tier -- tokens`, whose standard output is the section's figures): it needs the real
//! agent CLIs and the model server, so it runs only when named.

use std::fs;
use std::process::{Command, Stdio};

use crate::{Result, cargo, root, say, tier_cargo_args};

struct Bench {
    name: &'static str,
    package: &'static str,
    target: &'static str,
}

const BENCHES: &[Bench] = &[
    Bench {
        name: "plan-scale",
        package: "epic-story-plan",
        target: "scale",
    },
    Bench {
        name: "fuzz",
        package: "epic-story-plan",
        target: "fuzz",
    },
    Bench {
        name: "git-ops",
        package: "epic-git-ops",
        target: "ops",
    },
    Bench {
        name: "makespan",
        package: "epic",
        target: "makespan",
    },
    Bench {
        name: "overhead",
        package: "epic",
        target: "overhead",
    },
    Bench {
        name: "memory",
        package: "epic",
        target: "memory",
    },
    Bench {
        name: "sandbox",
        package: "epic",
        target: "sandbox",
    },
    Bench {
        name: "merge-queue",
        package: "epic",
        target: "merge_queue",
    },
    Bench {
        name: "worktrees",
        package: "epic",
        target: "worktrees",
    },
    Bench {
        name: "scale",
        package: "epic",
        target: "scale",
    },
];

pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|arg| arg == "--quick");
    let only: Vec<&String> = args.iter().filter(|arg| !arg.starts_with("--")).collect();
    let path = root().join("BENCHMARKS.md");
    let mut document = fs::read_to_string(&path).unwrap_or_else(|_| {
        "# Benchmarks\n\nFigures written by `cargo xtask bench`; each section names the command \
         that produced it and the machine.\n"
            .to_owned()
    });
    if only.iter().any(|name| *name == "tokens") {
        let figures = tokens()?;
        let section = format!(
            "<!-- bench:tokens -->\n{figures}\n\nCommand: `cargo xtask bench tokens` (the CLIs of `xtask/agents.txt`, against `epic-model-server`).\nMachine: {machine}.\n<!-- /bench:tokens -->",
            figures = figures.trim_end(),
            machine = machine(),
        );
        document = replace_section(&document, "tokens", &section);
        say(&section);
    }
    for bench in BENCHES {
        if !only.is_empty() && !only.iter().any(|name| *name == bench.name) {
            continue;
        }
        let mut cargo_args = vec![
            "bench",
            "--locked",
            "-p",
            bench.package,
            "--bench",
            bench.target,
        ];
        if quick {
            cargo_args.extend(["--", "--quick"]);
        }
        say(&format!("$ cargo {}", cargo_args.join(" ")));
        let output = Command::new(cargo())
            .args(&cargo_args)
            .current_dir(root())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|error| format!("failed to start cargo: {error}"))?;
        if !output.status.success() {
            return Err(format!(
                "benchmark `{}` failed ({})",
                bench.name, output.status
            ));
        }
        let figures = String::from_utf8_lossy(&output.stdout);
        let section = format!(
            "<!-- bench:{name} -->\n{figures}\nCommand: `cargo xtask bench {name}` (runs `cargo {args}`).\nMachine: {machine}.\n<!-- /bench:{name} -->",
            name = bench.name,
            figures = figures.trim_end(),
            args = cargo_args.join(" "),
            machine = machine(),
        );
        document = replace_section(&document, bench.name, &section);
        say(&section);
    }
    fs::write(&path, document)
        .map_err(|error| format!("failed to write {}: {error}", path.display()))
}

/// The tokens bench's figures and how to read them: the tier's standard output (its progress
/// goes to the terminal).
fn tokens() -> Result<String> {
    let cargo_args = tier_cargo_args("tokens", &[]);
    say(&format!("$ cargo {}", cargo_args.join(" ")));
    let output = Command::new(cargo())
        .args(&cargo_args)
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("failed to start cargo: {error}"))?;
    if !output.status.success() {
        return Err(format!("benchmark `tokens` failed ({})", output.status));
    }
    String::from_utf8(output.stdout).map_err(|error| format!("the tokens bench printed {error}"))
}

fn replace_section(document: &str, name: &str, section: &str) -> String {
    let open = format!("<!-- bench:{name} -->");
    let close = format!("<!-- /bench:{name} -->");
    match (document.find(&open), document.find(&close)) {
        (Some(start), Some(end)) if end > start => {
            format!(
                "{}{section}{}",
                &document[..start],
                &document[end + close.len()..]
            )
        }
        _ => format!("{}\n{section}\n", document.trim_end()),
    }
}

/// The processor, core count and memory, as far as /proc tells, and the date.
fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown processor".into());
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let memory = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let kib: u64 = info
                .lines()
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some(format!("{} GiB", kib / 1024 / 1024))
        })
        .unwrap_or_else(|| "unknown memory".into());
    let date = Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    format!(
        "{cpu}, {cores} cores, {memory}, {}, {date}",
        std::env::consts::OS
    )
}
