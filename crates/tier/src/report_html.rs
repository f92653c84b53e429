//! The HTML report in a real browser: `epic demo` runs its sample epic, `epic report --format
//! html` prints the page, and headless Chromium draws it. The screenshot must hold a picture
//! (far more than a blank page's bytes), and the page's DOM as Chromium built it must hold the
//! dependency graph and the timeline with every story of the demo. It needs no agent CLI: it
//! runs offline, without the npm install.
//!
//! Chromium is Debian's `chromium` (`.ci/run` installs it); without it the case fails saying
//! what to install. The screenshot is kept at `<target>/report-html.png`, the picture
//! `docs/report-html.png` is taken from.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;
use crate::cases::{indent, run_captured};

/// The case's name, which `cargo xtask agents FILTER` matches.
pub(crate) const NAME: &str = "report html: the demo's page drawn by headless Chromium";

/// The demo's stories, each of which the page must draw.
const STORIES: [&str; 6] = ["strings", "math", "slug", "stats", "banner", "summary"];

/// The window the page is drawn in: a laptop's width, long enough for the three pictures.
const WINDOW: &str = "--window-size=1000,1400";

/// How long `epic demo`, and each Chromium run, may take.
const DEADLINE: Duration = Duration::from_mins(2);

/// How many times a blank page's screenshot the report's must weigh at least: a blank PNG
/// compresses to almost nothing, a drawn one does not.
const OVER_BLANK: u64 = 5;

/// The browser's program: `chromium`, or `chromium-browser` where it is named so.
fn chromium() -> Result<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|program| {
            Command::new(program)
                .arg("--version")
                .output()
                .is_ok_and(|output| output.status.success())
        })
        .ok_or_else(|| {
            "Chromium is not installed: install Debian's `chromium` package \
             (`apt-get install chromium`) to run this case"
                .to_owned()
        })
}

/// Runs the case as the tier runs each, in `scratch/report-html`: its verdict said, its name
/// returned when it failed.
pub(crate) fn case(epic: &Path, scratch: &Path, keep: &Path) -> Option<String> {
    let started = Instant::now();
    let outcome = run(epic, &scratch.join("report-html"), keep);
    crate::say(&format!(
        "{} {NAME} ({:.0} s)",
        if outcome.is_ok() { "ok  " } else { "FAIL" },
        started.elapsed().as_secs_f64()
    ));
    let why = outcome.err()?;
    crate::say(&indent(&why));
    Some(NAME.to_owned())
}

/// Runs the case in `dir` with the `epic` binary at `epic`; the screenshot is copied to `keep`.
fn run(epic: &Path, dir: &Path, keep: &Path) -> Result {
    let browser = chromium()?;
    fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let repo = dir.join("textkit");
    let mut demo = Command::new(epic);
    demo.args(["demo", "--no-progress", "--keep"]).arg(&repo);
    let (code, out, err) = captured(demo)?;
    if code != Some(0) {
        return Err(format!(
            "`epic demo` exited {code:?}:\n{}",
            indent(&format!("{out}{err}"))
        ));
    }
    let mut report = Command::new(epic);
    report
        .args(["report", "--format", "html", "--repo"])
        .arg(&repo);
    let (code, page, err) = captured(report)?;
    if code != Some(0) {
        return Err(format!(
            "`epic report --format html` exited {code:?}:\n{}",
            indent(&err)
        ));
    }
    let html = dir.join("report.html");
    let blank = dir.join("blank.html");
    for (path, text) in [
        (&html, page.as_str()),
        (&blank, "<!DOCTYPE html><html><body></body></html>"),
    ] {
        fs::write(path, text)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    let shot = screenshot(browser, dir, &html, "report.png")?;
    let blank_shot = screenshot(browser, dir, &blank, "blank.png")?;
    let size = |path: &Path| fs::metadata(path).map_or(0, |meta| meta.len());
    let (drawn, empty) = (size(&shot), size(&blank_shot));
    if drawn < empty.max(1) * OVER_BLANK {
        return Err(format!(
            "the screenshot {} weighs {drawn} bytes, a blank page's {empty}: nothing was drawn",
            shot.display()
        ));
    }
    let dom = dump_dom(browser, dir, &html)?;
    let missing: Vec<String> = [
        r#"<svg id="graph""#,
        r#"<svg id="timeline""#,
        r#"<svg id="usage""#,
    ]
    .into_iter()
    .map(str::to_owned)
    .chain(
        STORIES
            .iter()
            .map(|story| format!(r#"data-story="{story}""#)),
    )
    .filter(|needle| !dom.contains(needle.as_str()))
    .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the page Chromium built lacks {}:\n{}",
            missing.join(", "),
            indent(&dom.chars().take(2000).collect::<String>())
        ));
    }
    fs::copy(&shot, keep).map_err(|error| format!("cannot keep the screenshot: {error}"))?;
    crate::say(&format!("  screenshot: {} ({drawn} bytes)", keep.display()));
    Ok(())
}

/// `command` run with its output captured, under [`DEADLINE`]: its exit code, standard output
/// and standard error.
fn captured(mut command: Command) -> Result<(Option<i32>, String, String)> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    run_captured(command, None, DEADLINE)
}

/// The common arguments of a headless Chromium run in `dir`, its profile there too.
fn headless(browser: &str, dir: &Path) -> Command {
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            WINDOW,
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join("chromium").display()
        ))
        .env("HOME", dir);
    command
}

/// `page` drawn by Chromium into `dir/name`.
fn screenshot(browser: &str, dir: &Path, page: &Path, name: &str) -> Result<PathBuf> {
    let shot = dir.join(name);
    let mut command = headless(browser, dir);
    command
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()));
    let (code, out, err) = captured(command)?;
    if code != Some(0) || !shot.is_file() {
        return Err(format!(
            "Chromium made no screenshot of {} (exit {code:?}):\n{}",
            page.display(),
            indent(&format!("{out}{err}"))
        ));
    }
    Ok(shot)
}

/// The DOM Chromium built from `page`.
fn dump_dom(browser: &str, dir: &Path, page: &Path) -> Result<String> {
    let mut command = headless(browser, dir);
    command
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()));
    let (code, out, err) = captured(command)?;
    if code != Some(0) {
        return Err(format!(
            "Chromium's --dump-dom exited {code:?}:\n{}",
            indent(&err)
        ));
    }
    Ok(out)
}
