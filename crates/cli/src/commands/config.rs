//! `epic config [RUN OPTIONS]`: the options `epic run` would use, and where each comes from.
//!
//! It runs the same resolution as `epic run`: the flags over `epic.toml` at the repository root
//! over the options the last run was given (`options.json`, when exactly one epic has run in
//! the repository: a rerun of it takes them) over the defaults, so it checks a command line and
//! the config file without running anything.
//!
//! `--format json` prints [`ConfigJson`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::args::{ConfigArgs, Format, GlobalArgs};
use crate::commands::{json, render};
use crate::config::{self, RunOptions};
use crate::error::CommandError;
use crate::output::{self, Output};
use crate::repo;

/// `epic config --format json`.
#[derive(Debug, Serialize)]
struct ConfigJson {
    /// The config file read, or `null` when the repository has none.
    config_file: Option<PathBuf>,
    /// The resolved options, with the config file's keys (timeouts in seconds; `epic_branch`
    /// `null` for `epic/<epic_id>`, `judge` `null` for no judge).
    options: RunOptions,
    /// Where each option's value comes from: `flag`, `epic.toml`, `last run` or `default`.
    sources: BTreeMap<&'static str, &'static str>,
}

/// Runs `epic config`.
pub(crate) fn run(global: &GlobalArgs, args: &ConfigArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("config", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let (path, file) = match RunOptions::load(&repo.root)? {
        Some((path, file)) => (Some(path), file),
        None => (None, RunOptions::default()),
    };
    let from_file = file.keys_set();
    let mut from_flags = args.options.options.given().keys_set();
    from_flags.extend(args.options.options.dropped());
    let last = last_run(&repo)?.unwrap_or_default();
    let from_last = last.keys_set();
    // Without a coder `epic run` refuses; `epic config` shows what is there and says so.
    let options = config::merged(&file.over(&last), &args.options.options);
    let missing_coder = options.coder.is_none();
    config::check_seats(&options)?;
    let sources = config::keys()
        .iter()
        .map(|&key| {
            let source = if from_flags.contains(&key) {
                "flag"
            } else if from_file.contains(&key) {
                config::FILE_NAME
            } else if from_last.contains(&key) {
                "last run"
            } else {
                "default"
            };
            (key, source)
        })
        .collect();
    let document = ConfigJson {
        config_file: path,
        options,
        sources,
    };
    let text = match format {
        Format::Json => json(&document),
        _ => text(&document, out),
    };
    output::data(&text)?;
    if missing_coder {
        out.hint(&format!(
            "no coder seat yet: `epic run` needs one; pass `--coder SEAT` (claude, codex, gemini, \
             aider, opencode, script or exec:COMMAND) or set `coder = \"claude\"` in {} at the \
             repository root",
            config::FILE_NAME
        ));
    }
    Ok(())
}

/// The options the last run of the only epic that has run in `repo` was given, as a rerun of it
/// takes them; none when no epic or several have run, or the last run recorded none.
fn last_run(repo: &crate::repo::Repo) -> Result<Option<RunOptions>, CommandError> {
    let Ok(crate::epics::Selected::One(dir)) = crate::epics::select(repo, None) else {
        return Ok(None);
    };
    epic_state_store::load::<config::LastRun>(dir.run_options())
        .map(|last| last.map(|last| last.0))
        .map_err(|error| CommandError::new(crate::error::Kind::Repository, error))
}

/// Values longer than this do not set the width of the value column.
const LONG: usize = 48;

/// The config file, then one line per option: key, value, source.
fn text(document: &ConfigJson, out: Output) -> String {
    let options = serde_json::to_value(&document.options).unwrap_or_default();
    render(|w| {
        if !out.quiet() {
            match &document.config_file {
                Some(path) => writeln!(w, "config file: {}\n", path.display())?,
                None => writeln!(
                    w,
                    "config file: none (`epic init` writes a commented {})\n",
                    config::FILE_NAME
                )?,
            }
        }
        let keys = config::keys();
        let width = keys.iter().map(|key| key.len()).max().unwrap_or(0);
        let values: Vec<String> = keys
            .iter()
            .map(|&key| show(key, options.get(key)))
            .collect();
        // A long value (the default test patterns) takes its own room rather than widening
        // every line.
        let value_width = values
            .iter()
            .map(|v| v.chars().count())
            .filter(|&n| n <= LONG)
            .max()
            .unwrap_or(0);
        for (key, value) in keys.iter().zip(&values) {
            let source = document.sources.get(key).copied().unwrap_or("default");
            writeln!(w, "{key:width$}  {value:value_width$}  ({source})")?;
        }
        Ok(())
    })
}

/// An option's value for people: strings bare, lists of strings quoted and comma-separated,
/// prices as `prefix $in/$out`, `none` for nothing.
fn show(key: &str, value: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match (key, value) {
        ("epic_branch", None | Some(Value::Null)) => "epic/<epic_id>".to_owned(),
        ("architect", None | Some(Value::Null)) => "the coder".to_owned(),
        (_, None | Some(Value::Null)) => "none".to_owned(),
        (_, Some(Value::Array(items))) if items.is_empty() => "none".to_owned(),
        (_, Some(Value::Object(map))) if map.is_empty() => "none".to_owned(),
        (_, Some(Value::String(text))) => text.clone(),
        (_, Some(Value::Array(items))) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        ("prices", Some(Value::Object(prices))) => {
            let prices: Vec<String> = prices
                .iter()
                .map(|(prefix, price)| {
                    format!(
                        "{prefix} ${}/${} per million in/out",
                        price["input"], price["output"]
                    )
                })
                .collect();
            prices.join(", ")
        }
        ("seats", Some(Value::Object(seats))) => {
            let seats: Vec<String> = seats
                .iter()
                .map(|(name, seat)| {
                    let env = seat["env"]
                        .as_object()
                        .map(|env| env.keys().cloned().collect::<Vec<_>>().join(" "))
                        .filter(|names| !names.is_empty())
                        .map(|names| format!(" with {names}"))
                        .unwrap_or_default();
                    format!(
                        "{name} = {}{env}",
                        seat["seat"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            seats.join(", ")
        }
        (_, Some(value)) => value.to_string(),
    }
}
