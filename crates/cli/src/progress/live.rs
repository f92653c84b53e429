//! The live view (stderr is a terminal): the lines that stay printed above a region redrawn in
//! place (indicatif), the header with the counts by state, the wave picture and a line per
//! running story.

use std::collections::BTreeMap;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::tracker::{State, StoryView, Tracker};
use super::view::View;

/// The live view: lines above, a region redrawn in place below.
pub(super) struct Live {
    multi: MultiProgress,
    header: ProgressBar,
    waves: ProgressBar,
    running: BTreeMap<String, ProgressBar>,
    style: ProgressStyle,
}

impl Live {
    pub(super) fn new() -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        let plain = ProgressStyle::with_template("{wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let header = multi.add(ProgressBar::new_spinner().with_style(plain.clone()));
        let waves = multi.add(ProgressBar::new_spinner().with_style(plain));
        let style = ProgressStyle::with_template("  {spinner} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        Self {
            multi,
            header,
            waves,
            running: BTreeMap::new(),
            style,
        }
    }
}

impl View for Live {
    fn line(&mut self, text: &str) {
        self.multi.println(text).ok();
    }

    fn refresh(&mut self, tracker: &Tracker) {
        self.header.set_message(tracker.header());
        self.waves.set_message(tracker.wave_picture());
        let running: Vec<&StoryView> = tracker
            .stories
            .iter()
            .filter(|story| story.state == State::Running)
            .collect();
        self.running.retain(|id, bar| {
            let keep = running.iter().any(|story| story.id == *id);
            if !keep {
                bar.finish_and_clear();
            }
            keep
        });
        let width = tracker.id_width();
        for story in running {
            let bar = self.running.entry(story.id.clone()).or_insert_with(|| {
                self.multi
                    .add(ProgressBar::new_spinner().with_style(self.style.clone()))
            });
            bar.set_message(story.line(width));
            bar.tick();
        }
    }

    fn finish(&mut self) {
        for bar in self.running.values() {
            bar.finish_and_clear();
        }
        self.header.finish_and_clear();
        self.waves.finish_and_clear();
        self.multi.clear().ok();
    }
}
