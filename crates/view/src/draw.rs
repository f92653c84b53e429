//! The full-screen view drawn from an [`App`] alone: the header, the table of stories (those
//! that need a person marked, bold and, with colour, red or yellow), the detail pane of the
//! story selected, the footer (the keys, the last message, or the prompt line), and the list
//! of keys over all of it when asked. Any size draws: what does not fit is cut, never a panic.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row as TableRow, Table, TableState};

use crate::app::{App, KEYS, Mode, Verb};
use crate::figures::{TITLES, cells};
use crate::model::Status;
use crate::text::{NEEDS_PERSON, header};

/// How many lines of a gate failure's output the detail pane shows below its first.
const GATE_LINES: usize = 6;

/// Draws `app` on `frame`.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    let head = header(&app.board);
    let head_height = u16::try_from(head.len()).unwrap_or(u16::MAX);
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(head_height),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    let rows = u16::try_from(app.board.stories.len()).unwrap_or(u16::MAX);
    // The table takes what its rows need, up to half of what is left; the detail the rest.
    let table_height = rows.saturating_add(1).min(middle.height / 2).max(
        // At least the titles and one row, where there is room.
        middle.height.min(2),
    );
    let [table, detail] =
        Layout::vertical([Constraint::Length(table_height), Constraint::Min(0)]).areas(middle);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    frame.render_widget(
        Paragraph::new(
            head.into_iter()
                .enumerate()
                .map(|(index, line)| {
                    Line::styled(line, if index == 0 { bold } else { Style::default() })
                })
                .collect::<Vec<_>>(),
        ),
        top,
    );
    draw_table(frame, app, table);
    draw_detail(frame, app, detail);
    draw_footer(frame, app, bottom);
    if app.mode == Mode::Help {
        draw_help(frame, area);
    }
}

/// The style of a story's row: those that need a person bold, and coloured where colour is on.
fn style(status: Status, color: bool) -> Style {
    let style = if status.needs_person() {
        Style::default().add_modifier(Modifier::BOLD)
    } else {
        Style::default()
    };
    if !color {
        return style;
    }
    match status {
        Status::Waiting | Status::Stopped => style.fg(Color::Yellow),
        Status::Failed => style.fg(Color::Red),
        Status::Running => style.fg(Color::Cyan),
        Status::Paused => style.fg(Color::Magenta),
        Status::Done => style.fg(Color::Green),
        Status::Started | Status::Skipped | Status::NotStarted => style.fg(Color::DarkGray),
    }
}

/// The table of stories, the selected one reversed.
fn draw_table(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let rows: Vec<[String; 9]> = app
        .board
        .stories
        .iter()
        .map(|row| {
            let mut cells = cells(row);
            let marker = if row.status.needs_person() {
                NEEDS_PERSON
            } else {
                ' '
            };
            cells[0] = format!("{marker}{}", cells[0]);
            cells
        })
        .collect();
    // Each column as wide as its widest cell (the story's and the turn's capped), the last
    // takes what is left.
    let mut widths: Vec<Constraint> = Vec::with_capacity(TITLES.len());
    for (column, title) in TITLES.iter().enumerate() {
        if column + 1 == TITLES.len() {
            widths.push(Constraint::Fill(1));
            break;
        }
        let widest = rows
            .iter()
            .map(|cells| cells[column].chars().count())
            .chain([title.len() + usize::from(column == 0)])
            .max()
            .unwrap_or(0);
        let cap = match column {
            0 => 18,
            3 => 16,
            _ => 10,
        };
        widths.push(Constraint::Length(
            u16::try_from(widest.min(cap)).unwrap_or(u16::MAX),
        ));
    }
    let titles = TableRow::new(
        TITLES
            .iter()
            .enumerate()
            .map(|(column, title)| {
                if column == 0 {
                    format!(" {title}")
                } else {
                    (*title).to_owned()
                }
            })
            .collect::<Vec<_>>(),
    )
    .style(Style::default().add_modifier(Modifier::UNDERLINED));
    let body = app
        .board
        .stories
        .iter()
        .zip(rows)
        .map(|(row, cells)| TableRow::new(cells.to_vec()).style(style(row.status, app.color)));
    let table = Table::new(body, widths)
        .header(titles)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(app.selected_index());
    frame.render_stateful_widget(table, area, &mut state);
}

/// The detail pane of the story selected: its question or reason, its tasks, the last gate
/// failure, the judge's issues, the rejected patch, then as much of the latest transcript's
/// end as fits.
fn draw_detail(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(index) = app.selected_index() else {
        frame.render_widget(
            Paragraph::new("no story yet").block(Block::default().borders(Borders::TOP)),
            area,
        );
        return;
    };
    let row = &app.board.stories[index];
    let detail = &app.detail;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'_>> = Vec::new();
    if let Some(reason) = &row.reason {
        let label = if row.status == Status::Waiting {
            "question: "
        } else {
            "reason: "
        };
        lines.push(Line::from(vec![
            Span::styled(label, bold),
            Span::raw(reason.replace('\n', " ")),
        ]));
    }
    if !detail.tasks.is_empty() {
        let done = detail.tasks.iter().filter(|(done, _)| *done).count();
        lines.push(Line::styled(
            format!("tasks {done}/{}", detail.tasks.len()),
            bold,
        ));
        for (done, title) in &detail.tasks {
            let mark = if *done { 'x' } else { ' ' };
            lines.push(Line::raw(format!("  [{mark}] {title}")));
        }
    }
    if let Some(failure) = &detail.gate_failure {
        // A merge revision's red gates come with their output: its first lines.
        let mut said = failure.lines().filter(|line| !line.trim().is_empty());
        lines.push(Line::from(vec![
            Span::styled("last gate failure: ", bold),
            Span::raw(said.next().unwrap_or_default().to_owned()),
        ]));
        lines.extend(
            said.take(GATE_LINES)
                .map(|line| Line::raw(format!("  {line}"))),
        );
    }
    for issue in &detail.judge_issues {
        lines.push(Line::from(vec![
            Span::styled("judge: ", bold),
            Span::raw(issue.clone()),
        ]));
    }
    if let Some(patch) = &detail.rejected_patch {
        lines.push(Line::from(vec![
            Span::styled("rejected patch: ", bold),
            Span::raw(patch.clone()),
        ]));
    }
    let inner = usize::from(area.height.saturating_sub(1));
    if let Some((name, tail)) = &detail.transcript {
        let room = inner.saturating_sub(lines.len() + 1);
        if room > 0 {
            lines.push(Line::styled(format!("transcript {name}"), bold));
            let skip = tail.len().saturating_sub(room);
            lines.extend(tail[skip..].iter().map(|line| Line::raw(line.clone())));
        }
    }
    let block = Block::default()
        .borders(Borders::TOP)
        .title(format!(" {} ", row.id));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The footer: the prompt line, else the last message, else the keys in short.
fn draw_footer(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let line = match &app.mode {
        Mode::Prompt { verb, story, text } if verb.takes_text() => Line::from(vec![
            Span::styled(
                format!("{} {story}: ", verb.name()),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("{text}_")),
            Span::raw("  (Enter sends, Esc cancels)"),
        ]),
        Mode::Prompt { verb, story, .. } => Line::styled(
            match verb {
                Verb::Retry | Verb::RetryFresh => format!(
                    "{} story {story}? Enter sends, f fresh or not, Esc cancels",
                    verb.name()
                ),
                _ => format!("{} story {story}? Enter sends, Esc cancels", verb.name()),
            },
            Style::default().add_modifier(Modifier::BOLD),
        ),
        _ => match &app.message {
            Some(message) => Line::raw(message.clone()),
            None => {
                Line::raw("j/k select · a answer · t tell · s stop · r retry · ? keys · q quit")
            }
        },
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The list of keys, from [`KEYS`], in a box over the middle of the screen.
fn draw_help(frame: &mut Frame<'_>, area: Rect) {
    let lines: Vec<Line<'_>> = KEYS
        .iter()
        .map(|(_, shown, _, what)| Line::raw(format!(" {shown:<4} {what}")))
        .collect();
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let width = 72.min(area.width);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::app::Key;
    use crate::gather::{cart_detail, fixture_board};

    /// The screen of `app` on a terminal of `width`×`height`, as text.
    fn screen(app: &App, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a terminal");
        terminal.draw(|frame| draw(frame, app)).expect("drawn");
        terminal.backend().to_string()
    }

    fn app(running: bool) -> App {
        let mut app = App::new(fixture_board(running), false);
        app.selected = Some("cart".to_owned());
        app.detail = cart_detail();
        app
    }

    #[test]
    fn every_story_state_on_a_wide_terminal() {
        insta::assert_snapshot!(screen(&app(true), 110, 30));
    }

    #[test]
    fn an_80_by_24_terminal() {
        insta::assert_snapshot!(screen(&app(true), 80, 24));
    }

    #[test]
    fn the_last_run_when_none_is_going() {
        insta::assert_snapshot!(screen(&app(false), 100, 24));
    }

    #[test]
    fn the_keys_and_a_prompt() {
        let mut app = app(true);
        app.key(Key::Char('?'));
        insta::assert_snapshot!("keys", screen(&app, 80, 24));
        app.key(Key::Char('?'));
        app.key(Key::Char('t'));
        for char in "use the discount".chars() {
            app.key(Key::Char(char));
        }
        let footer = screen(&app, 80, 24);
        assert!(footer.contains("tell cart: use the discount_"), "{footer}");
    }

    #[test]
    fn without_colour_the_marker_and_bold_say_it() {
        for color in [false, true] {
            let mut app = app(true);
            app.color = color;
            let mut terminal = Terminal::new(TestBackend::new(100, 24)).expect("a terminal");
            terminal.draw(|frame| draw(frame, &app)).expect("drawn");
            let buffer = terminal.backend().buffer();
            let coloured = buffer.content().iter().any(|cell| cell.fg != Color::Reset);
            assert_eq!(coloured, color, "colour {color}");
            // `billing` (failed) is the second story: its row, below the header and titles.
            let row = 4 + 1;
            assert_eq!(buffer[(0, row)].symbol(), "!");
            assert!(buffer[(1, row)].modifier.contains(Modifier::BOLD));
        }
    }

    #[test]
    fn tiny_and_empty_terminals_do_not_panic() {
        let app = app(true);
        for (width, height) in [(1, 1), (10, 3), (0, 0), (80, 2), (3, 40)] {
            let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a terminal");
            terminal.draw(|frame| draw(frame, &app)).expect("drawn");
        }
        let mut help = app.clone();
        help.mode = Mode::Help;
        let mut terminal = Terminal::new(TestBackend::new(5, 2)).expect("a terminal");
        terminal.draw(|frame| draw(frame, &help)).expect("drawn");
    }
}
