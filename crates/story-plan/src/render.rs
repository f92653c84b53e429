//! Rendering a plan as the operator-facing Markdown document.
//!
//! The document is for reading and editing: the epic, its waves, one section per story, and the
//! plan itself as a fenced `json storyplan` block. Only the block is read back, so
//! `parse(render(plan)) == plan`, and the prose is regenerated from the block.

use std::fmt::Write as _;

use crate::StoryPlan;
use crate::graph::Graph;
use crate::parse::{fence_view, is_plan_fence};

impl StoryPlan {
    /// The plan as Markdown (see the module docs); ends with a newline.
    ///
    /// ```
    /// use epic_story_plan::{PlanFormat, Story, StoryPlan};
    /// let plan = StoryPlan {
    ///     epic_id: "shop".into(),
    ///     epic: "A shop.".into(),
    ///     stories: vec![Story::new("cart", "Cart", ["src/cart"])],
    /// };
    /// let markdown = plan.to_markdown();
    /// assert!(markdown.starts_with("# Epic: shop\n"));
    /// assert_eq!(StoryPlan::parse(&markdown, PlanFormat::Markdown)?, plan);
    /// # Ok::<(), epic_story_plan::ParseError>(())
    /// ```
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = self.write_markdown(&mut out);
        out
    }

    fn write_markdown(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "# Epic: {}", self.epic_id)?;
        let epic = self.epic.trim();
        if !epic.is_empty() {
            write!(out, "\n{epic}\n")?;
        }

        out.push_str("\n## Waves\n\n");
        let graph = Graph::new(self);
        let waves = graph.waves();
        for (n, wave) in waves.iter().enumerate() {
            let ids: Vec<&str> = wave.iter().map(|&i| self.stories[i].id.as_str()).collect();
            writeln!(out, "{}. {}", n + 1, ids.join(", "))?;
        }
        let placed: usize = waves.iter().map(Vec::len).sum();
        if placed < self.stories.len() {
            let numbers = graph.wave_numbers();
            let unplaced: Vec<&str> = self
                .stories
                .iter()
                .zip(numbers)
                .filter(|(_, wave)| wave.is_none())
                .map(|(story, _)| story.id.as_str())
                .collect();
            write!(
                out,
                "\nNever ready (a dependency cycle or an unknown dependency): {}\n",
                unplaced.join(", ")
            )?;
        }

        out.push_str("\n## Stories\n");
        for story in &self.stories {
            write!(out, "\n### {} — {}\n\n", story.id, story.title)?;
            let description = story.description.trim();
            if !description.is_empty() {
                write!(out, "{description}\n\n")?;
            }
            writeln!(out, "- depends on: {}", list(&story.depends_on, false))?;
            writeln!(out, "- owned: {}", list(&story.owned, true))?;
            writeln!(
                out,
                "- shared read-only: {}",
                list(&story.shared_read_only, true)
            )?;
            writeln!(out, "- provides: {}", list(&story.provides, false))?;
            if !story.read_first.is_empty() {
                writeln!(out, "- read first: {}", list(&story.read_first, true))?;
            }
            if story.tests_change {
                out.push_str("- may change tests: yes\n");
            }
            if let Some(time) = &story.estimated_time {
                writeln!(out, "- estimated time: {}", time.trim())?;
            }
            if !story.acceptance.is_empty() {
                out.push_str("\nDone when:\n\n");
                for (n, criterion) in story.acceptance.iter().enumerate() {
                    writeln!(out, "{}. {}", n + 1, criterion.trim())?;
                }
            }
        }

        // Prose comes from the plan's own strings; a line of it that would open a plan block is
        // escaped, so the real block below stays the first one and the rendering parses back.
        *out = escape_plan_fences(out);

        out.push_str("\n## Plan block\n\n");
        out.push_str(
            "Edit this block to change the plan; the prose above is regenerated from it.\n\n",
        );
        out.push_str("```json storyplan\n");
        // A plan holds only strings, lists and booleans: serialising it cannot fail.
        out.push_str(&serde_json::to_string_pretty(self).unwrap_or_default());
        out.push_str("\n```\n");
        Ok(())
    }
}

fn escape_plan_fences(prose: &str) -> String {
    let mut escaped = String::with_capacity(prose.len());
    for line in prose.split_inclusive('\n') {
        if is_plan_fence(fence_view(line)) {
            // A backslash before the backticks: Markdown shows them literally, no fence opens.
            let indent = line.len() - line.trim_start().len();
            escaped.push_str(&line[..indent]);
            escaped.push('\\');
            escaped.push_str(&line[indent..]);
        } else {
            escaped.push_str(line);
        }
    }
    escaped
}

fn list(items: &[String], code: bool) -> String {
    if items.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = items
        .iter()
        .map(|item| {
            if code {
                format!("`{item}`")
            } else {
                item.clone()
            }
        })
        .collect();
    shown.join(", ")
}
