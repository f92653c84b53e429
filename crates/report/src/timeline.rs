//! [`Timeline`]: when the stories ran, the makespan and the parallelism achieved.

use std::time::Duration;

use jiff::Timestamp;

use crate::model::{EpicReport, StoryOutcome, elapsed};

/// When the stories of a report ran: each story with a start and a finish no earlier than it.
///
/// Stories without both times, or finishing before they started (a clock that went backwards),
/// are left out of every figure.
///
/// ```
/// use epic_report::{EpicReport, StoryOutcome, OutcomeStatus, Timeline};
///
/// let at = |t: &str| t.parse::<epic_report::Timestamp>().unwrap();
/// let story = |id: &str, start, finish| {
///     StoryOutcome::new(id, id, OutcomeStatus::Done).started(at(start)).finished(at(finish))
/// };
/// let report = EpicReport::new("e", "epic/e")
///     .with_story(story("a", "2026-03-01T09:00:00Z", "2026-03-01T09:10:00Z"))
///     .with_story(story("b", "2026-03-01T09:00:00Z", "2026-03-01T09:08:00Z"))
///     .with_story(story("c", "2026-03-01T09:10:00Z", "2026-03-01T09:20:00Z"));
/// let timeline = Timeline::of(&report).unwrap();
/// assert_eq!(timeline.makespan().as_secs(), 20 * 60);
/// assert_eq!(timeline.busy().as_secs(), 28 * 60);
/// assert_eq!(timeline.parallelism(), Some(1.4));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline<'a> {
    spans: Vec<Span<'a>>,
    start: Timestamp,
    finish: Timestamp,
}

/// One story's run on a [`Timeline`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span<'a> {
    /// The story.
    pub story: &'a StoryOutcome,
    /// When it started.
    pub start: Timestamp,
    /// When it finished.
    pub finish: Timestamp,
    /// How long it ran.
    pub duration: Duration,
}

impl<'a> Timeline<'a> {
    /// The timeline of `report`, or `None` if no story has a start and a finish.
    pub fn of(report: &'a EpicReport) -> Option<Self> {
        let spans: Vec<Span<'a>> = report
            .stories
            .iter()
            .filter_map(|story| {
                let (start, finish) = (story.started_at?, story.finished_at?);
                Some(Span {
                    story,
                    start,
                    finish,
                    duration: elapsed(start, finish)?,
                })
            })
            .collect();
        let start = spans.iter().map(|span| span.start).min()?;
        let finish = spans.iter().map(|span| span.finish).max()?;
        Some(Self {
            spans,
            start,
            finish,
        })
    }

    /// The stories that ran, in plan order.
    pub fn spans(&self) -> &[Span<'a>] {
        &self.spans
    }

    /// The earliest start.
    pub fn start(&self) -> Timestamp {
        self.start
    }

    /// The latest finish.
    pub fn finish(&self) -> Timestamp {
        self.finish
    }

    /// From the earliest start to the latest finish.
    pub fn makespan(&self) -> Duration {
        elapsed(self.start, self.finish).unwrap_or_default()
    }

    /// The sum of the stories' durations.
    pub fn busy(&self) -> Duration {
        self.spans.iter().fold(Duration::ZERO, |sum, span| {
            sum.saturating_add(span.duration)
        })
    }

    /// The parallelism achieved: [`busy`](Self::busy) over [`makespan`](Self::makespan), or
    /// `None` when the makespan is zero. 1 is one story at a time.
    pub fn parallelism(&self) -> Option<f64> {
        let makespan = self.makespan();
        (!makespan.is_zero()).then(|| self.busy().as_secs_f64() / makespan.as_secs_f64())
    }
}

impl EpicReport {
    /// When the stories ran, if any has both a start and a finish.
    pub fn timeline(&self) -> Option<Timeline<'_>> {
        Timeline::of(self)
    }
}
