//! The view's state ([`App`]) and what a key does to it. Keys are data: [`KEYS`] maps each to
//! its [`Action`], and the help screen (`?`) is drawn from the same table. A key that asks
//! for a person's command opens a prompt line; Enter gives back an [`Effect::Send`] for the
//! caller to queue (the view itself writes nothing).

use crate::model::{Board, Detail};

/// A key, as the view reads it (the terminal's keys mapped by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character.
    Char(char),
    /// The up arrow.
    Up,
    /// The down arrow.
    Down,
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
}

/// A person's command to a story, as `epic answer`, `tell`, `stop` and `retry` give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `epic answer`: words for a story that waits on them.
    Answer,
    /// `epic tell`: a note for the story's next coder turn.
    Tell,
    /// `epic stop`: the story stopped until a retry.
    Stop,
    /// `epic retry`: a failed or stopped story run again from its checkpoint.
    Retry,
    /// `epic retry --fresh`: run again from the epic head (`f` in a retry's prompt).
    RetryFresh,
}

impl Verb {
    /// The command's name (`answer`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Answer => "answer",
            Self::Tell => "tell",
            Self::Stop => "stop",
            Self::Retry => "retry",
            Self::RetryFresh => "retry --fresh",
        }
    }

    /// Whether it takes words (answer, tell); the others only ask to confirm.
    pub fn takes_text(self) -> bool {
        matches!(self, Self::Answer | Self::Tell)
    }
}

/// What a key of [`KEYS`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The story above is selected.
    Up,
    /// The story below is selected.
    Down,
    /// A prompt for a person's command to the story selected.
    Give(Verb),
    /// The list of keys shown, or hidden.
    Help,
    /// The view left; the run goes on.
    Quit,
}

/// Each key, what it does and its line on the help screen.
pub const KEYS: &[(&[Key], &str, Action, &str)] = &[
    (
        &[Key::Up, Key::Char('k')],
        "↑ k",
        Action::Up,
        "select the story above",
    ),
    (
        &[Key::Down, Key::Char('j')],
        "↓ j",
        Action::Down,
        "select the story below",
    ),
    (
        &[Key::Char('a')],
        "a",
        Action::Give(Verb::Answer),
        "answer the story's question (epic answer)",
    ),
    (
        &[Key::Char('t')],
        "t",
        Action::Give(Verb::Tell),
        "leave a note for its next coder turn (epic tell)",
    ),
    (
        &[Key::Char('s')],
        "s",
        Action::Give(Verb::Stop),
        "stop the story (epic stop)",
    ),
    (
        &[Key::Char('r')],
        "r",
        Action::Give(Verb::Retry),
        "run a failed or stopped story again (epic retry; f: --fresh)",
    ),
    (
        &[Key::Char('?')],
        "?",
        Action::Help,
        "show or hide these keys",
    ),
    (
        &[Key::Char('q')],
        "q",
        Action::Quit,
        "leave the view (the run goes on)",
    ),
];

/// What the view is showing beside the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// The board and the detail pane.
    Board,
    /// The list of keys over them.
    Help,
    /// A prompt line for a command to a story: Enter sends it, Esc cancels.
    Prompt {
        /// The command.
        verb: Verb,
        /// The story it goes to.
        story: String,
        /// The words typed so far (answer, tell).
        text: String,
    },
}

/// What the caller does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing beyond drawing again.
    None,
    /// Another story is selected: read its detail.
    Selected,
    /// A command to queue, as the same `epic` command would.
    Send {
        /// The command.
        verb: Verb,
        /// The story.
        story: String,
        /// Its words (empty for stop and retry).
        text: String,
    },
    /// Leave.
    Quit,
}

/// The view's whole state: drawing is a function of it alone.
#[derive(Debug, Clone)]
pub struct App {
    /// The epic as last read.
    pub board: Board,
    /// The story selected, by id (it stays selected as the rows move).
    pub selected: Option<String>,
    /// The selected story's detail.
    pub detail: Detail,
    /// What is shown beside the board.
    pub mode: Mode,
    /// The last line to tell the person (what was queued, or why not).
    pub message: Option<String>,
    /// Whether to draw in colour (`NO_COLOR` unset); without, markers and bold say it.
    pub color: bool,
}

impl App {
    /// A view of `board`, its first story selected.
    pub fn new(board: Board, color: bool) -> Self {
        let selected = board.stories.first().map(|row| row.id.clone());
        Self {
            board,
            selected,
            detail: Detail::default(),
            mode: Mode::Board,
            message: None,
            color,
        }
    }

    /// The board read again; the selection stays on its story, or on the first when that one
    /// is gone.
    pub fn set_board(&mut self, board: Board) {
        self.board = board;
        let still = self
            .selected
            .as_ref()
            .is_some_and(|id| self.board.stories.iter().any(|row| row.id == *id));
        if !still {
            self.selected = self.board.stories.first().map(|row| row.id.clone());
        }
    }

    /// The row index of the story selected.
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.selected.as_ref()?;
        self.board.stories.iter().position(|row| row.id == *id)
    }

    /// What `key` does.
    pub fn key(&mut self, key: Key) -> Effect {
        if let Mode::Prompt { verb, story, text } = &mut self.mode {
            return match key {
                Key::Esc => {
                    self.mode = Mode::Board;
                    self.message = Some("cancelled".to_owned());
                    Effect::None
                }
                Key::Enter => {
                    let effect = Effect::Send {
                        verb: *verb,
                        story: story.clone(),
                        text: text.clone(),
                    };
                    self.mode = Mode::Board;
                    effect
                }
                Key::Backspace => {
                    text.pop();
                    Effect::None
                }
                // A retry's prompt: `f` starts it over from the epic head, or not.
                Key::Char('f') if matches!(verb, Verb::Retry | Verb::RetryFresh) => {
                    *verb = if *verb == Verb::Retry {
                        Verb::RetryFresh
                    } else {
                        Verb::Retry
                    };
                    Effect::None
                }
                Key::Char(char) if verb.takes_text() => {
                    text.push(char);
                    Effect::None
                }
                _ => Effect::None,
            };
        }
        let Some(action) = KEYS
            .iter()
            .find(|(keys, ..)| keys.contains(&key))
            .map(|(_, _, action, _)| *action)
        else {
            // Any other key leaves the help screen.
            if self.mode == Mode::Help {
                self.mode = Mode::Board;
            }
            return Effect::None;
        };
        match action {
            Action::Help => {
                self.mode = if self.mode == Mode::Help {
                    Mode::Board
                } else {
                    Mode::Help
                };
                Effect::None
            }
            Action::Quit => Effect::Quit,
            Action::Up | Action::Down => {
                self.mode = Mode::Board;
                self.step(action == Action::Down)
            }
            Action::Give(verb) => {
                self.mode = Mode::Board;
                let Some(story) = self.selected.clone() else {
                    self.message = Some("no story to give a command to".to_owned());
                    return Effect::None;
                };
                self.message = None;
                self.mode = Mode::Prompt {
                    verb,
                    story,
                    text: String::new(),
                };
                Effect::None
            }
        }
    }

    /// The story below (`down`) or above selected; none past either end.
    fn step(&mut self, down: bool) -> Effect {
        let count = self.board.stories.len();
        let Some(index) = self.selected_index() else {
            return Effect::None;
        };
        let next = if down {
            (index + 1).min(count.saturating_sub(1))
        } else {
            index.saturating_sub(1)
        };
        if next == index {
            return Effect::None;
        }
        self.selected = Some(self.board.stories[next].id.clone());
        Effect::Selected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gather::fixture_board;

    #[test]
    fn keys_select_prompt_send_and_cancel() {
        let mut app = App::new(fixture_board(true), false);
        // Needs-a-person stories first: `search` is selected.
        assert_eq!(app.selected.as_deref(), Some("search"));
        assert_eq!(
            app.key(Key::Char('k')),
            Effect::None,
            "nothing above the first"
        );
        assert_eq!(app.key(Key::Down), Effect::Selected);
        assert_eq!(app.selected.as_deref(), Some("billing"));
        assert_eq!(app.key(Key::Char('j')), Effect::Selected);
        assert_eq!(app.key(Key::Up), Effect::Selected);
        // `r` asks to confirm; letters are no text for it; Enter sends.
        app.key(Key::Char('r'));
        assert!(matches!(
            app.mode,
            Mode::Prompt {
                verb: Verb::Retry,
                ..
            }
        ));
        app.key(Key::Char('q'));
        assert_eq!(
            app.key(Key::Enter),
            Effect::Send {
                verb: Verb::Retry,
                story: "billing".to_owned(),
                text: String::new()
            }
        );
        assert_eq!(app.mode, Mode::Board);
        // `a` takes words, `q` and `j` among them; Backspace takes one back; Esc cancels.
        app.key(Key::Char('a'));
        for char in "8080qj".chars() {
            assert_eq!(app.key(Key::Char(char)), Effect::None);
        }
        app.key(Key::Backspace);
        assert!(matches!(&app.mode, Mode::Prompt { text, .. } if text == "8080q"));
        app.key(Key::Esc);
        assert_eq!(app.mode, Mode::Board);
        assert_eq!(app.message.as_deref(), Some("cancelled"));
        // `?` shows the keys, any other key hides them; `q` leaves.
        app.key(Key::Char('?'));
        assert_eq!(app.mode, Mode::Help);
        app.key(Key::Char('x'));
        assert_eq!(app.mode, Mode::Board);
        assert_eq!(app.key(Key::Char('q')), Effect::Quit);
    }

    #[test]
    fn the_selection_follows_its_story_as_the_rows_move() {
        let mut app = App::new(fixture_board(true), false);
        app.selected = Some("cart".to_owned());
        let mut board = fixture_board(true);
        board.stories.reverse();
        app.set_board(board);
        assert_eq!(app.selected.as_deref(), Some("cart"));
        let mut board = fixture_board(true);
        board.stories.retain(|row| row.id != "cart");
        app.set_board(board);
        assert_eq!(app.selected.as_deref(), Some("search"), "gone: the first");
    }

    #[test]
    fn every_action_has_a_key_and_a_line() {
        for action in [
            Action::Up,
            Action::Down,
            Action::Give(Verb::Answer),
            Action::Give(Verb::Tell),
            Action::Give(Verb::Stop),
            Action::Give(Verb::Retry),
            Action::Help,
            Action::Quit,
        ] {
            assert!(
                KEYS.iter().any(|(keys, _, of, what)| *of == action
                    && !keys.is_empty()
                    && !what.is_empty()),
                "{action:?}"
            );
        }
    }
}
