//! The workspace's layers, as tidy holds the manifests to them and `cargo xtask gen` writes
//! ARCHITECTURE.md's table of crates from them: which crate may depend on which, and the
//! dependencies a manifest names.

/// Each crate directory, its package, and the internal packages it may depend on (normal,
/// build and target-specific dependencies; dev-dependencies are free). No arrow runs up.
pub(crate) const LAYERS: &[(&str, &str, &[&str])] = &[
    ("watch", "epic-watch", &[]),
    ("story-plan", "epic-story-plan", &[]),
    ("perimeter", "epic-perimeter", &["epic-story-plan"]),
    ("acp", "epic-acp", &["epic-story-plan", "epic-perimeter"]),
    ("report", "epic-report", &[]),
    ("test-failures", "epic-test-failures", &[]),
    ("state-store", "epic-state-store", &["epic-watch"]),
    ("git-ops", "epic-git-ops", &["epic-watch"]),
    ("process", "epic-process", &["epic-git-ops"]),
    (
        "guard",
        "epic-guard",
        &["epic-git-ops", "epic-process", "epic-state-store"],
    ),
    (
        "attest",
        "epic-attest",
        &[
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
        ],
    ),
    (
        "agents",
        "epic-agents",
        &[
            "epic-acp",
            "epic-story-plan",
            "epic-report",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
        ],
    ),
    (
        "events",
        "epic-events",
        &[
            "epic-story-plan",
            "epic-report",
            "epic-state-store",
            "epic-process",
            "epic-agents",
        ],
    ),
    (
        "gates",
        "epic-gates",
        &[
            "epic-perimeter",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-test-failures",
            "epic-attest",
            "epic-events",
        ],
    ),
    (
        "protocol",
        "epic-protocol",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-git-ops",
            "epic-agents",
        ],
    ),
    (
        "chat",
        "epic-chat",
        &[
            "epic-story-plan",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-agents",
            "epic-protocol",
            "epic-events",
        ],
    ),
    ("schedule", "epic-schedule", &["epic-story-plan"]),
    (
        "claims",
        "epic-claims",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-git-ops",
            "epic-agents",
            "epic-protocol",
            "epic-events",
            "epic-chat",
        ],
    ),
    (
        "branch",
        "epic-branch",
        &[
            "epic-story-plan",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-attest",
            "epic-agents",
        ],
    ),
    (
        "architect",
        "epic-architect",
        &[
            "epic-story-plan",
            "epic-report",
            "epic-state-store",
            "epic-process",
            "epic-agents",
            "epic-protocol",
            "epic-events",
            "epic-chat",
            "epic-branch",
        ],
    ),
    (
        "executor",
        "epic-executor",
        &[
            "epic-watch",
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-attest",
            "epic-agents",
            "epic-protocol",
            "epic-test-failures",
            "epic-events",
            "epic-gates",
            "epic-chat",
            "epic-branch",
            "epic-claims",
            "epic-schedule",
        ],
    ),
    (
        "land",
        "epic-land",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-attest",
            "epic-agents",
            "epic-protocol",
            "epic-test-failures",
            "epic-events",
            "epic-gates",
            "epic-chat",
            "epic-branch",
            "epic-executor",
        ],
    ),
    // `epic watch`'s view: it reads the state as `epic status` does and follows it by kernel
    // notification; the CLI owns the terminal and queues the commands its keys give.
    (
        "view",
        "epic-view",
        &[
            "epic-watch",
            "epic-story-plan",
            "epic-report",
            "epic-state-store",
            "epic-events",
        ],
    ),
    (DEV_ONLY.0, DEV_ONLY.1, &[]),
    // Test support beside `test-support`: the scripted model server `cargo xtask agents` points
    // the real agent CLIs at; it speaks the model APIs and needs no epic crate.
    ("model-server", "epic-model-server", &[]),
    // Test support beside them: the real-CLI tier (`cargo xtask agents`, `cargo xtask bench
    // tokens`), a binary xtask runs; it drives the `epic` and model-server binaries, not their
    // code, and needs no epic crate.
    (TIER, "epic-tier", &[]),
    (
        "cli",
        "epic",
        &[
            "epic-story-plan",
            "epic-perimeter",
            "epic-report",
            "epic-state-store",
            "epic-git-ops",
            "epic-process",
            "epic-guard",
            "epic-attest",
            "epic-agents",
            "epic-protocol",
            "epic-test-failures",
            "epic-events",
            "epic-gates",
            "epic-chat",
            "epic-branch",
            "epic-schedule",
            "epic-architect",
            "epic-executor",
            "epic-land",
            "epic-view",
        ],
    ),
];

/// The dependency names of a manifest's `[dependencies]`, `[build-dependencies]` and
/// `[target.'…'.dependencies]` tables (not dev-dependencies).
pub(crate) fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut counted = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']');
            counted = table == "dependencies"
                || table == "build-dependencies"
                || (table.starts_with("target.") && table.ends_with(".dependencies"));
            continue;
        }
        if !counted || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line
            .split(['=', '.'])
            .next()
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            names.push(name.to_owned());
        }
    }
    names
}

/// The dev-only crate, directory and package: the fixtures of every crate's tests and benches.
/// Outside the layers: a `[dev-dependencies]` entry of any crate, named by no crate's
/// `[dependencies]` (no code users run is built with it), depending on no epic crate itself, and
/// free to name the `git` program in its sources (it builds the tests' repositories).
pub(crate) const DEV_ONLY: (&str, &str) = ("test-support", "epic-test-support");

/// The real-CLI tier's crate directory (`epic-tier`, test support like the model server): free,
/// like [`DEV_ONLY`], to name the `git` program in its sources (it builds each case's scratch
/// repository); named by no crate's dependencies (xtask runs it with `cargo run`).
pub(crate) const TIER: &str = "tier";
