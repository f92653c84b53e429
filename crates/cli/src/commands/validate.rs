//! `epic validate PLAN`: parse a plan and list every violation.
//!
//! The violations are the command's data, so they go to stdout (as text or JSON) and the exit
//! code says whether there were any: 0 valid, 1 violations, 2 unreadable or unparsable.

use epic_story_plan::Violation;
use serde::Serialize;

use crate::args::{Format, GlobalArgs, PlanArgs};
use crate::commands::{json, violations_text};
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::plan_file::{self, count};

/// The JSON document `epic validate --format json` prints.
#[derive(Debug, Serialize)]
struct Report<'a> {
    valid: bool,
    violations: &'a [Violation],
}

/// Runs `epic validate`.
pub(crate) fn run(global: &GlobalArgs, args: &PlanArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("validate", &[Format::Text, Format::Json])?;
    let plan = plan_file::load(&args.plan, out)?;
    let checked = plan.validate();
    let violations = match &checked {
        Ok(_) => &[][..],
        Err(errors) => errors.violations(),
    };
    if format == Format::Json {
        output::data(&json(&Report {
            valid: violations.is_empty(),
            violations,
        }))?;
    } else if let Ok(valid) = &checked {
        if !out.quiet() {
            output::data(&format!(
                "{}: valid — {} in {}\n",
                args.plan.display(),
                count(valid.plan().stories.len(), "story", "stories"),
                count(valid.waves().len(), "wave", "waves"),
            ))?;
        }
    } else {
        output::data(&violations_text(violations, &args.plan))?;
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(CommandError::reported(Kind::Violations))
    }
}
