//! `--sandbox` through the real binary, on a machine without `bwrap` (a `PATH` holding the
//! tools a run needs but not it): `on` refuses to run (exit 2, before anything starts, saying
//! what to install), `auto` runs unsandboxed and says so once.
//!
//! And with `bwrap` (these tests fail, saying so, where it is missing: CI installs it): the
//! credential stores of a throwaway `HOME` planted with fake keys read as empty to a coder, a
//! gate and a lander that try to copy them into the story's files, while `--expose` shows one
//! store and an agent's own configuration stays readable.

use std::path::{Path, PathBuf};

use crate::util::{Repo, file_plan};

/// A directory of links to the programs a run with the script seat needs (`sh` for gates,
/// `git`), and none to `bwrap`: a `PATH` of a machine without bubblewrap.
fn path_without_bwrap(repo: &Repo) -> PathBuf {
    let bin = repo.temp().join("bin-without-bwrap");
    std::fs::create_dir_all(&bin).expect("bin dir");
    for tool in ["sh", "git", "cat", "env", "mkdir", "rm", "test"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(tool))
            .find(|path| path.is_file());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, bin.join(tool)).expect("link a tool");
        }
    }
    assert!(!bin.join("bwrap").exists());
    bin
}

fn run(repo: &Repo, path: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["run", "plan.json", "--coder", "script", "--no-progress"];
    args.extend_from_slice(extra);
    let output = repo
        .command(&args)
        .env("PATH", path)
        .output()
        .expect("run epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn sandbox_on_without_bwrap_is_exit_2_before_anything_starts() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let path = path_without_bwrap(&repo);
    let (code, stderr) = run(&repo, &path, &["--sandbox", "on"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`bwrap` is not installed")
            && stderr.contains("apt-get install bubblewrap"),
        "{stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );
    assert!(
        !repo
            .common_dir()
            .join("epic")
            .join("shop")
            .join("events.jsonl")
            .exists(),
        "no run started"
    );
}

#[test]
fn sandbox_auto_without_bwrap_runs_and_says_so_once() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let path = path_without_bwrap(&repo);
    let (code, stderr) = run(&repo, &path, &["--sandbox", "auto", "--gate", "true"]);
    assert_eq!(code, Some(0), "{stderr}");
    let warning = "run without the sandbox: `bwrap` is not installed";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.contains("apt-get install bubblewrap"), "{stderr}");
    let events = std::fs::read_to_string(
        repo.common_dir()
            .join("epic")
            .join("shop")
            .join("events.jsonl"),
    )
    .expect("events");
    assert_eq!(events.matches(warning).count(), 1, "{events}");
}

/// Fails the test, naming what to install, when `bwrap` cannot make a sandbox here.
fn require_bwrap() {
    let works = std::process::Command::new("bwrap")
        .args([
            "--dev-bind",
            "/",
            "/",
            "--unshare-pid",
            "--proc",
            "/proc",
            "--",
            "true",
        ])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        works,
        "this test needs a working bubblewrap (`bwrap`): apt-get install bubblewrap"
    );
}

/// The credential stores planted in the throwaway home, from `$HOME` (or, the last two, from
/// `$XDG_CONFIG_HOME`), each a directory (holding one key file) or a file; store `n` holds
/// `SECRET-<n>`.
const PLANTED: &[(&str, bool)] = &[
    ("$HOME/.ssh", true),
    ("$HOME/.aws", true),
    ("$HOME/.gnupg", true),
    ("$HOME/.kube", true),
    ("$HOME/.azure", true),
    ("$HOME/.config/gh", true),
    ("$HOME/.netrc", false),
    ("$HOME/.git-credentials", false),
    ("$HOME/.docker/config.json", false),
    ("$HOME/.config/git/credentials", false),
    ("$HOME/.cargo/credentials.toml", false),
    ("$HOME/.pypirc", false),
    ("$XDG_CONFIG_HOME/gh", true),
    ("$XDG_CONFIG_HOME/git/credentials", false),
];

/// A throwaway home in `repo`'s temporary directory, its configuration home at `xdg/`, with a
/// fake key in every store of [`PLANTED`], Codex's configuration (`~/.codex/config.toml`,
/// holding `CODEX-CONFIG`) and a plain file (`NOT-A-STORE`), both of which stay visible.
fn planted_home(repo: &Repo) -> PathBuf {
    let home = repo.temp().join("home");
    for (n, (store, dir)) in PLANTED.iter().enumerate() {
        let path = PathBuf::from(
            store
                .replace("$HOME", &home.display().to_string())
                .replace("$XDG_CONFIG_HOME", &home.join("xdg").display().to_string()),
        );
        let file = if *dir { path.join("key") } else { path };
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("the store's directory");
        std::fs::write(&file, format!("SECRET-{n}\n")).expect("plant a key");
    }
    std::fs::create_dir_all(home.join(".codex")).expect("codex dir");
    std::fs::write(home.join(".codex/config.toml"), "# CODEX-CONFIG\n").expect("codex config");
    std::fs::write(home.join("notes.txt"), "NOT-A-STORE\n").expect("a plain file");
    home
}

/// Shell lines that append every store of [`PLANTED`] to `$1` (what a directory holds), each
/// error included, and the home's plain file.
fn loot_lines() -> String {
    let mut lines = vec!["out=\"$1\"".to_owned()];
    for (store, dir) in PLANTED {
        lines.push(if *dir {
            format!("find \"{store}\" -type f -exec cat {{}} + >> \"$out\" 2>&1")
        } else {
            format!("cat \"{store}\" >> \"$out\" 2>&1")
        });
    }
    lines.push("cat \"$HOME/notes.txt\" >> \"$out\" 2>&1\n".to_owned());
    lines.join("\n")
}

/// An executable script in the temporary directory.
fn script(repo: &Repo, name: &str, body: &str) -> PathBuf {
    let path = repo.temp().join(name);
    epic_test_support::script(&path, body);
    path
}

/// An `exec:` agent that, as coder, copies every credential store into `a/loot.txt` (and
/// `~/.ssh` into `a/ssh-copy/`), Codex's configuration into `a/codex.txt`, and writes
/// `a/a.txt`; as lander, puts the stores into the conflicted `a/a.txt` after a `LANDER` line.
fn thief(repo: &Repo) -> String {
    let loot = script(repo, "loot.sh", &loot_lines());
    let body = format!(
        "cat > /dev/null\n\
         case \"$EPIC_ROLE\" in\n\
         planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
         coder)\n\
           mkdir -p a\n\
           sh '{loot}' a/loot.txt\n\
           cp -R \"$HOME/.ssh\" a/ssh-copy 2>/dev/null\n\
           cat \"$HOME/.codex/config.toml\" > a/codex.txt 2>&1\n\
           echo alpha > a/a.txt\n\
           echo wrote a ;;\n\
         lander) echo LANDER > a/a.txt; sh '{loot}' a/a.txt; echo resolved ;;\n\
         *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
         esac\n",
        loot = loot.display(),
    );
    format!("exec:{}", script(repo, "thief.sh", &body).display())
}

/// A gate that appends every credential store to `<temp>/gate-loot.txt` (outside the
/// repository: the sandbox lets it write there) after a `gate ran` line, and passes.
fn thieving_gate(repo: &Repo) -> String {
    let loot = script(repo, "gate-loot.sh", &loot_lines());
    let out = repo.temp().join("gate-loot.txt");
    format!(
        "echo gate ran >> '{out}'; sh '{loot}' '{out}'",
        out = out.display(),
        loot = loot.display()
    )
}

/// `epic ARGS` at the repository root with `home` as `HOME` (and `home/xdg` as
/// `XDG_CONFIG_HOME`), the sandbox required: its exit code and stderr.
fn run_at_home(repo: &Repo, home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.extend(["--sandbox", "on", "--no-progress"]);
    let output = repo
        .command(&all)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .output()
        .expect("run epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether any file of `rev`'s tree holds `needle`.
fn tree_holds(repo: &Repo, rev: &str, needle: &str) -> bool {
    let status = std::process::Command::new("git")
        .args(["grep", "-q", "--fixed-strings", needle, rev, "--"])
        .current_dir(repo.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo.temp())
        .status()
        .expect("run git grep");
    match status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!("git grep {needle} {rev} failed: {other:?}"),
    }
}

fn commit_all(repo: &Repo, message: &str) {
    repo.git(&["add", "-A"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "-m",
        message,
    ]);
}

#[test]
fn no_agent_gate_or_lander_reads_a_credential_store() {
    require_bwrap();
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    commit_all(&repo, "the plan");
    let home = planted_home(&repo);
    let (coder, gate) = (thief(&repo), thieving_gate(&repo));
    let (code, stderr) = run_at_home(
        &repo,
        &home,
        &["run", "plan.json", "--coder", &coder, "--gate", &gate],
    );
    assert_eq!(code, Some(0), "{stderr}");

    // The coder's copies merged, empty of keys; Codex's configuration was there to read.
    assert!(
        tree_holds(&repo, "epic/shop", "NOT-A-STORE"),
        "the copy merged"
    );
    assert!(
        !tree_holds(&repo, "epic/shop", "SECRET-"),
        "a key on the epic branch"
    );
    assert!(tree_holds(&repo, "epic/shop", "CODEX-CONFIG"));
    // The gate ran (baseline, task, merge) and read nothing.
    let gate_loot = std::fs::read_to_string(repo.temp().join("gate-loot.txt")).expect("loot");
    let gate_runs = gate_loot.matches("gate ran").count();
    assert!(gate_runs >= 2, "{gate_loot}");
    assert!(gate_loot.contains("NOT-A-STORE"), "{gate_loot}");
    assert!(!gate_loot.contains("SECRET-"), "{gate_loot}");
    // The stores are as they were, and none that did not exist was made.
    assert_eq!(
        std::fs::read_to_string(home.join(".ssh/key")).expect("key"),
        "SECRET-0\n"
    );
    assert!(!home.join(".terraform.d").exists() && !home.join(".gem").exists());

    // The landing's lander turn and gates are hidden from as much.
    repo.write("a/a.txt", "main's alpha\n");
    commit_all(&repo, "main: a/a.txt");
    let (code, stderr) = run_at_home(&repo, &home, &["land", "--target", "main"]);
    assert_eq!(code, Some(0), "{stderr}");
    let landed = repo.git_output(&["show", "main:a/a.txt"]);
    assert!(
        landed.contains("LANDER") && landed.contains("NOT-A-STORE"),
        "the lander's copy landed: {landed}"
    );
    assert!(!tree_holds(&repo, "main", "SECRET-"), "a key on main");
    let gate_loot = std::fs::read_to_string(repo.temp().join("gate-loot.txt")).expect("loot");
    assert!(
        gate_loot.matches("gate ran").count() > gate_runs,
        "{gate_loot}"
    );
    assert!(!gate_loot.contains("SECRET-"), "{gate_loot}");
}

#[test]
fn an_exposed_store_is_shown_and_only_it() {
    require_bwrap();
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let home = planted_home(&repo);
    let (coder, gate) = (thief(&repo), thieving_gate(&repo));
    let (code, stderr) = run_at_home(
        &repo,
        &home,
        &[
            "run",
            "plan.json",
            "--coder",
            &coder,
            "--gate",
            &gate,
            "--expose",
            "~/.ssh",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let loot = repo.git_output(&["show", "epic/shop:a/loot.txt"]);
    assert!(loot.contains("SECRET-0"), "{loot}");
    assert_eq!(loot.matches("SECRET-").count(), 1, "{loot}");
    assert_eq!(
        repo.git_output(&["show", "epic/shop:a/ssh-copy/key"]),
        "SECRET-0\n"
    );
    let gate_loot = std::fs::read_to_string(repo.temp().join("gate-loot.txt")).expect("loot");
    assert!(gate_loot.contains("SECRET-0"), "{gate_loot}");
    assert!(!gate_loot.contains("SECRET-1"), "{gate_loot}");
}

#[test]
fn exposing_what_is_not_a_store_is_a_config_error() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let home = planted_home(&repo);
    let (code, stderr) = run_at_home(
        &repo,
        &home,
        &[
            "run",
            "plan.json",
            "--coder",
            "script",
            "--expose",
            "~/.codex",
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`~/.codex`") && stderr.contains("not a credential store"),
        "{stderr}"
    );
    assert!(stderr.contains("~/.ssh, ~/.gnupg"), "{stderr}");
    assert!(
        !repo.common_dir().join("epic/shop/events.jsonl").exists(),
        "no run started"
    );
}

/// Whether this test process runs as root (`/proc/self/status`'s effective uid is 0): the
/// containment tests below are the hole's own only as root, which CI and most containers are.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|uids| uids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Shell lines that try to undo the sandbox and append what each did to `$out`: the process's
/// capabilities, unmounting a hidden store, remounting the repository, the worktrees and the
/// git directory writable (directly, and from a user namespace made inside), writing a file
/// into each of those, and reading the key under the hidden store.
fn escape_lines(repo: &Repo) -> String {
    let places = [
        ("checkout", repo.path().to_path_buf()),
        ("worktrees", repo.temp().join("shop.worktrees")),
        ("git directory", repo.common_dir()),
    ];
    let mut lines = vec![
        "try() { what=\"$1\"; shift; if \"$@\" >/dev/null 2>&1; then echo \"DONE $what\" >> \"$out\"; else echo \"refused $what\" >> \"$out\"; fi; }".to_owned(),
        "grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status >> \"$out\"".to_owned(),
        "try 'umount ~/.ssh' umount \"$HOME/.ssh\"".to_owned(),
        "try 'umount -l ~/.ssh' umount -l \"$HOME/.ssh\"".to_owned(),
        "try 'unshare, umount ~/.ssh' unshare -Um umount \"$HOME/.ssh\"".to_owned(),
    ];
    for (name, place) in places {
        let place = place.display();
        lines.push(format!(
            "try 'remount the {name}' mount -o remount,bind,rw '{place}'"
        ));
        lines.push(format!(
            "try 'unshare, remount the {name}' unshare -Um mount -o remount,bind,rw '{place}'"
        ));
        lines.push(format!(
            "try 'unshare, unmount the {name}' unshare -Um umount -l '{place}'"
        ));
        lines.push(format!(
            "try 'write into the {name}' sh -c \"echo planted > '{place}/planted-by-a-turn'\""
        ));
    }
    lines.push("cat \"$HOME/.ssh/key\" >> \"$out\" 2>/dev/null".to_owned());
    // What a tool's own sandbox needs (Codex's, a browser's): a user namespace of its own.
    lines.push(
        "unshare -Ur true 2>/dev/null && echo 'nested user namespace' >> \"$out\"".to_owned(),
    );
    lines.join("\n")
}

/// What an `escape_lines` probe wrote, checked: no capability, every attempt refused, no key.
fn assert_contained(probe: &str, who: &str) {
    for cap in ["CapEff", "CapPrm", "CapAmb"] {
        assert!(
            probe.contains(&format!("{cap}:\t0000000000000000")),
            "{who}: {cap} is not zero: {probe}"
        );
    }
    assert!(!probe.contains("DONE"), "{who} undid the sandbox: {probe}");
    assert_eq!(probe.matches("refused").count(), 15, "{who}: {probe}");
    assert!(!probe.contains("SECRET-"), "{who} read a key: {probe}");
    // As root too: its processes run as an ordinary id mapped to root, which may map itself.
    assert!(
        probe.contains("nested user namespace"),
        "{who} could not make a user namespace of its own: {probe}"
    );
}

#[test]
fn as_root_no_agent_or_gate_holds_a_capability_or_undoes_a_mount() {
    require_bwrap();
    if !is_root() {
        eprintln!("not root: the sandbox is proven here as an ordinary user, CI proves it as root");
    }
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    commit_all(&repo, "the plan");
    let home = planted_home(&repo);
    let escape = script(
        &repo,
        "escape.sh",
        &format!("out=\"$1\"\n{}", escape_lines(&repo)),
    );
    let coder = script(
        &repo,
        "coder.sh",
        &format!(
            "cat > /dev/null\n\
             case \"$EPIC_ROLE\" in\n\
             planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
             coder) mkdir -p a; sh '{escape}' a/probe.txt; echo alpha > a/a.txt; echo wrote a ;;\n\
             *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
             esac\n",
            escape = escape.display()
        ),
    );
    let gate_out = repo.temp().join("gate-probe.txt");
    let gate = format!(
        "[ -e '{out}' ] || sh '{escape}' '{out}'",
        out = gate_out.display(),
        escape = escape.display()
    );
    let (code, stderr) = run_at_home(
        &repo,
        &home,
        &[
            "run",
            "plan.json",
            "--coder",
            &format!("exec:{}", coder.display()),
            "--gate",
            &gate,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_contained(
        &repo.git_output(&["show", "epic/shop:a/probe.txt"]),
        "the coder",
    );
    assert_contained(
        &std::fs::read_to_string(&gate_out).expect("the gate's probe"),
        "the gate",
    );
    for place in [
        repo.path().to_path_buf(),
        repo.temp().join("shop.worktrees"),
        repo.common_dir(),
    ] {
        assert!(
            !place.join("planted-by-a-turn").exists(),
            "{} was written",
            place.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(home.join(".ssh/key")).expect("key"),
        "SECRET-0\n"
    );
}

#[test]
fn a_home_through_a_link_keeps_the_sandbox_on_and_the_stores_hidden() {
    require_bwrap();
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let home = planted_home(&repo);
    let link = repo.temp().join("home-link");
    std::os::unix::fs::symlink(&home, &link).expect("link the home");
    let coder = thief(&repo);
    // `--sandbox auto`, the default: it must sandbox, not fall back to running uncontained.
    let output = repo
        .command(&["run", "plan.json", "--coder", &coder, "--no-progress"])
        .env("HOME", &link)
        .env("XDG_CONFIG_HOME", link.join("xdg"))
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("without the sandbox"), "{stderr}");
    let loot = repo.git_output(&["show", "epic/shop:a/loot.txt"]);
    assert!(loot.contains("NOT-A-STORE"), "{loot}");
    assert!(
        !loot.contains("SECRET-"),
        "a key through the linked home: {loot}"
    );
    assert!(
        !tree_holds(&repo, "epic/shop", "SECRET-"),
        "a key on the epic branch"
    );
}

#[test]
fn a_bwrap_that_fails_stops_an_auto_run_with_its_own_words() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let path = path_without_bwrap(&repo);
    epic_test_support::script(
        &path.join("bwrap"),
        "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    );
    for extra in [&[][..], &["--sandbox", "on"][..]] {
        let (code, stderr) = run(&repo, &path, extra);
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        assert!(
            stderr.contains("setting up uid map: Permission denied")
                && stderr.contains("user namespaces")
                && stderr.contains("--sandbox off"),
            "{extra:?}: {stderr}"
        );
        assert!(!stderr.contains("apt-get install"), "{extra:?}: {stderr}");
        assert!(
            !repo.common_dir().join("epic/shop/events.jsonl").exists(),
            "no run started"
        );
    }
}

/// The commit a ref names, or `None` where it does not exist.
fn ref_at(repo: &Repo, name: &str) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", name])
        .current_dir(repo.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo.temp())
        .output()
        .expect("run git rev-parse");
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[test]
fn no_turn_moves_a_ref_epic_relies_on() {
    require_bwrap();
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    commit_all(&repo, "the plan");
    let main = ref_at(&repo, "refs/heads/main").expect("main");
    let log = repo.temp().join("refs.log");
    // Story a commits its own work (its branch moves) and tries every shared ref; story b
    // tries to move a's branch and to make one for a story of its own invention.
    let coder = script(
        &repo,
        "coder.sh",
        &format!(
            "cat > /dev/null\n\
             log='{log}'\n\
             try() {{ what=\"$1\"; shift; if \"$@\" >/dev/null 2>>\"$log\"; then echo \"MOVED $what\" >> \"$log\"; else echo \"refused $what\" >> \"$log\"; fi; }}\n\
             case \"$EPIC_ROLE\" in\n\
             planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
             coder)\n\
               mkdir -p \"$EPIC_STORY\"; echo \"$EPIC_STORY\" > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
               git add -A && git -c user.name=agent -c user.email=agent@example.com commit -q -m \"$EPIC_STORY by the agent\" 2>> \"$log\"\n\
               echo \"committed $EPIC_STORY\" >> \"$log\"\n\
               if [ \"$EPIC_STORY\" = a ]; then\n\
                 try main git update-ref refs/heads/main HEAD\n\
                 try 'the epic branch' git update-ref refs/heads/epic/shop HEAD\n\
                 try notes git update-ref refs/notes/epic HEAD\n\
                 try tag git tag planted\n\
                 try branch git branch planted\n\
               else\n\
                 try 'a sibling' git update-ref refs/heads/story/shop/a HEAD\n\
                 try 'a new story branch' git update-ref refs/heads/story/shop/zz HEAD\n\
               fi\n\
               echo done ;;\n\
             *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
             esac\n",
            log = log.display()
        ),
    );
    let output = repo
        .command(&[
            "run",
            "plan.json",
            "--coder",
            &format!("exec:{}", coder.display()),
            "--sandbox",
            "on",
            "--no-progress",
        ])
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log = std::fs::read_to_string(&log).expect("the coder's log");
    for shared in ["main", "the epic branch", "notes", "tag", "branch"] {
        assert!(
            log.contains(&format!("refused {shared}\n")),
            "{shared}: {log}\n{stderr}"
        );
    }
    // Inside its turn, b's sibling moves looked done to it (its own directory), and none
    // reached the repository: b failed, naming both.
    assert_eq!(output.status.code(), Some(1), "{log}\n{stderr}");
    assert!(
        stderr.contains("story/shop/a")
            && stderr.contains("story/shop/zz")
            && stderr.contains("the refs are epic's"),
        "{stderr}"
    );
    assert_eq!(
        ref_at(&repo, "refs/heads/main").as_deref(),
        Some(main.as_str())
    );
    assert_eq!(ref_at(&repo, "refs/heads/story/shop/zz"), None);
    assert_eq!(ref_at(&repo, "refs/tags/planted"), None);
    assert_eq!(ref_at(&repo, "refs/heads/planted"), None);
    // Story a's own commit moved its branch, and merged.
    assert_eq!(
        repo.git_output(&["log", "-1", "--format=%s", "story/shop/a"])
            .trim(),
        "a by the agent"
    );
    assert!(tree_holds(&repo, "epic/shop", "a"), "a merged");
    let verify = repo.command(&["verify"]).output().expect("run epic verify");
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn no_agent_reads_epic_toml() {
    require_bwrap();
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    repo.write("epic.toml", "# EPIC-TOML-MARKER\nconcurrency = 2\n");
    let config = repo.path().join("epic.toml");
    let coder = script(
        &repo,
        "reader.sh",
        &format!(
            "cat > /dev/null\n\
             case \"$EPIC_ROLE\" in\n\
             coder) mkdir -p a; cat '{config}' > a/config-copy.txt 2>&1; echo alpha > a/a.txt; echo done ;;\n\
             *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
             esac\n",
            config = config.display()
        ),
    );
    let output = repo
        .command(&[
            "run",
            "plan.json",
            "--coder",
            &format!("exec:{}", coder.display()),
            "--sandbox",
            "on",
            "--no-progress",
        ])
        .output()
        .expect("run epic");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        repo.git_output(&["show", "epic/shop:a/config-copy.txt"]),
        ""
    );
    assert!(
        std::fs::read_to_string(&config)
            .expect("epic.toml")
            .contains("EPIC-TOML-MARKER"),
        "the user's file is as it was"
    );
}

/// Two coders at once: a's looks for the directories b's turn holds its branch in (under the
/// git directory's `epic-turns/`) and writes b's branch there, which b's settling would
/// otherwise have moved the real branch to. They are read-only to every turn but b's own.
#[test]
fn a_turn_cannot_write_the_branch_another_turn_holds() {
    require_bwrap();
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    commit_all(&repo, "the plan");
    let temp = repo.temp();
    let log = temp.join("writes.log");
    // The two turns meet on named pipes: each open waits for the other side, no clock involved
    // (a turn whose other side never comes is ended by `--turn-timeout`).
    for pipe in ["b-started", "a-tried"] {
        let made = std::process::Command::new("mkfifo")
            .arg(temp.join(pipe))
            .status()
            .expect("run mkfifo");
        assert!(made.success(), "mkfifo {pipe}");
    }
    let coder = script(
        &repo,
        "coder.sh",
        &format!(
            "cat > /dev/null\n\
             t='{temp}'\n\
             mkdir -p \"$EPIC_STORY\"; echo \"$EPIC_STORY\" > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
             if [ \"$EPIC_STORY\" = a ]; then\n\
               read _ < \"$t/b-started\"\n\
               found=0\n\
               for f in '{common}'/epic-turns/*/refs/b; do\n\
                 [ -e \"$f\" ] || continue; found=1\n\
                 if echo 0000000000000000000000000000000000000001 > \"$f\" 2>/dev/null; then echo WROTE >> '{log}'; else echo refused >> '{log}'; fi\n\
               done\n\
               echo \"found $found\" >> '{log}'\n\
               echo tried > \"$t/a-tried\"\n\
             else\n\
               echo started > \"$t/b-started\"; read _ < \"$t/a-tried\"\n\
             fi\n\
             echo done\n",
            temp = temp.display(),
            log = log.display(),
            common = repo.common_dir().display()
        ),
    );
    let output = repo
        .command(&[
            "run",
            "plan.json",
            "--coder",
            &format!("exec:{}", coder.display()),
            "--concurrency",
            "2",
            "--turn-timeout",
            "120",
            "--sandbox",
            "on",
            "--no-progress",
        ])
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log =
        std::fs::read_to_string(&log).unwrap_or_else(|error| panic!("a's log: {error}\n{stderr}"));
    assert_eq!(output.status.code(), Some(0), "{log}\n{stderr}");
    assert!(
        log.contains("refused") && log.contains("found 1") && !log.contains("WROTE"),
        "{log}"
    );
    // b's branch is where b's own work left it: its file merged.
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "b\n");
}
