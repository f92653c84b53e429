//! Reading a plan file: the I/O `story-plan` leaves to its callers, and the hints for each way a
//! file can fail to be a plan.

use std::fs;
use std::io;
use std::path::Path;

use epic_story_plan::{ParseError, ParseErrorKind, PlanFormat, StoryPlan};

use crate::error::{CommandError, Kind, WithSource};
use crate::output::Output;

/// Reads and decodes the plan at `path` (as given, relative to the current directory).
pub(crate) fn load(path: &Path, out: Output) -> Result<StoryPlan, CommandError> {
    let bytes = fs::read(path).map_err(|error| read_error(path, error))?;
    let text = String::from_utf8(bytes).map_err(|error| {
        CommandError::new(
            Kind::Input,
            WithSource {
                message: format!("plan file `{}` is not UTF-8", path.display()),
                source: error.utf8_error(),
            },
        )
        .hint("save the plan as UTF-8 text")
    })?;
    let plan = StoryPlan::parse_file(path, &text).map_err(|error| parse_error(&error))?;
    if out.verbose() > 0 {
        let format = match PlanFormat::from_path(path) {
            Some(PlanFormat::Json) => "JSON",
            Some(PlanFormat::Toml) => "TOML",
            Some(PlanFormat::Markdown) => "Markdown",
            None => "plan",
        };
        out.note(&format!(
            "read {format} plan `{}`: epic {}, {}",
            path.display(),
            plan.epic_id,
            count(plan.stories.len(), "story", "stories")
        ));
    }
    Ok(plan)
}

fn read_error(path: &Path, error: io::Error) -> CommandError {
    let hint = match error.kind() {
        io::ErrorKind::NotFound => format!(
            "check the path: `{}` is relative to the current directory",
            path.display()
        ),
        io::ErrorKind::PermissionDenied => "check the file's permissions".into(),
        io::ErrorKind::IsADirectory => "name the plan file, not its directory".into(),
        _ => "check that the plan file is a readable file".into(),
    };
    CommandError::new(
        Kind::Input,
        WithSource {
            message: format!("failed to read plan file `{}`", path.display()),
            source: error,
        },
    )
    .hint(hint)
}

fn parse_error(error: &ParseError) -> CommandError {
    let hint = match error.kind() {
        ParseErrorKind::UnknownFormat => {
            "name the file plan.json, plan.toml or plan.md after the syntax it is written in"
        }
        ParseErrorKind::NoPlanBlock => {
            "only that block is read; `epic schema plan` prints the shape of the JSON it holds"
        }
        ParseErrorKind::Syntax => "fix the syntax at the position shown",
        _ => "`epic schema plan` prints the plan's shape",
    };
    CommandError::new(Kind::Input, error.clone()).hint(hint)
}

/// `n` and the noun in the right number: `1 story`, `3 stories`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
