//! The JSON the tier reads and writes, through `serde_json`: the model server's request log (a
//! JSON object a line, as `crates/model-server/src/server.rs` records each request), epic's
//! events (`events.jsonl`, an event a line tagged by its `kind`) and its report (`report.json`,
//! in its `{"version": N, "data": …}` envelope) read typed; the server's steps written a JSON
//! object a line.

use std::fs;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// One request as the model server logged it. Every field is optional in the log (a request
/// of no API holds only its method, path, size and answer), so each has a default.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Request {
    /// The API it came in on (`anthropic`, `responses`, `gemini`, `gemini-stream`).
    pub(crate) api: Option<String>,
    /// What epic's prompt asked for, as the server recognised it (`code`, `judge`, `review`,
    /// `plan`, `architect`, `land`, `verify`, …).
    pub(crate) kind: Option<String>,
    /// The API key it was signed with.
    pub(crate) key: Option<String>,
    /// The server's answer (`write`, `silent`, `cut`, `repeat`, `status 429`, …).
    pub(crate) answer: String,
    /// Epic's note to a turn run again, when the request held one.
    pub(crate) note: Option<String>,
    /// A person's answer to the coder's `BLOCKED_ON:` question (`epic answer`), when epic put
    /// one before the request.
    pub(crate) person_answer: Option<String>,
    /// How many tool results the request carried.
    pub(crate) tool_results: u64,
    /// The size of its body, in bytes.
    pub(crate) bytes: u64,
    /// The tool calls it was answered with.
    pub(crate) calls: Vec<Call>,
    /// The usage the server reported for its reply (none for a failure or a cut stream).
    pub(crate) usage: Option<Usage>,
}

/// A tool call the server answered with.
#[derive(Debug, Deserialize)]
pub(crate) struct Call {
    /// The tool, as the request offered it (`Write`, `exec_command`, `write_file`, …).
    pub(crate) name: String,
    /// Its arguments, as the API's tool takes them.
    #[serde(default)]
    pub(crate) args: Value,
}

/// The tokens the server reported for a reply.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Usage {
    /// Input tokens.
    pub(crate) input: u64,
    /// Output tokens.
    pub(crate) output: u64,
}

impl Request {
    /// Whether it came in on `api` (a prefix: `gemini` is Gemini CLI's `gemini` and
    /// `gemini-stream` requests).
    pub(crate) fn of_api(&self, api: &str) -> bool {
        self.api
            .as_deref()
            .is_some_and(|name| name.starts_with(api))
    }

    /// Whether epic's prompt asked for `kind`.
    pub(crate) fn is(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind)
    }

    /// Whether it was answered with at least one tool call.
    pub(crate) fn called(&self) -> bool {
        !self.calls.is_empty()
    }

    /// Whether it was answered with a call of one of `tools`.
    pub(crate) fn called_one_of(&self, tools: &[&str]) -> bool {
        self.calls
            .iter()
            .any(|call| tools.contains(&call.name.as_str()))
    }

    /// Whether a call it was answered with names `text` in its arguments (a file's path).
    pub(crate) fn calls_mention(&self, text: &str) -> bool {
        self.calls.iter().any(|call| mentions(&call.args, text))
    }
}

/// The requests of the server's log `logged`, a JSON object a line; a line that is not one (the
/// last, while the server is still writing it) is left out.
pub(crate) fn requests(logged: &str) -> Vec<Request> {
    logged
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// One of epic's events (`events.jsonl`), kept as JSON: each kind has fields of its own, and
/// the tier asks an event only for the few it checks.
#[derive(Debug)]
pub(crate) struct Event(Value);

impl Event {
    /// Its kind (`turn_stalled`, `seat_paused`, `story_merged`, …).
    pub(crate) fn kind(&self) -> &str {
        self.text("kind").unwrap_or_default()
    }

    /// Whether it is of `kind`.
    pub(crate) fn is(&self, kind: &str) -> bool {
        self.kind() == kind
    }

    /// Its field `name`, when that is a string.
    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// Its field `name` is `true`.
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool) == Some(true)
    }

    /// Whether any string in it, at any depth, holds `words`.
    pub(crate) fn mentions(&self, words: &str) -> bool {
        mentions(&self.0, words)
    }
}

/// The events of `text` (an `events.jsonl`), an event a line; a line that is not one (the last,
/// while epic is still writing it) is left out.
pub(crate) fn events(text: &str) -> Vec<Event> {
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .map(Event)
        .collect()
}

/// The events of the file at `path`: none when it is missing.
pub(crate) fn read_events(path: &Path) -> Vec<Event> {
    events(&fs::read_to_string(path).unwrap_or_default())
}

/// Whether any string in `value`, at any depth (object keys left out), holds `words`.
fn mentions(value: &Value, words: &str) -> bool {
    match value {
        Value::String(text) => text.contains(words),
        Value::Array(items) => items.iter().any(|item| mentions(item, words)),
        Value::Object(fields) => fields.values().any(|item| mentions(item, words)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// What the tier reads of a `report.json`: its stories' outcomes and the epic's seats. A
/// report that is missing or unreadable reads as one with no story and no seat.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Report {
    /// Each story's outcome.
    pub(crate) stories: Vec<Story>,
    /// The epic's usage by seat (each story lists the seats it used too, not read here).
    pub(crate) seats: Vec<Seat>,
}

/// The `{"version": N, "data": …}` envelope epic keeps its documents in.
#[derive(Deserialize)]
struct Envelope {
    data: Report,
}

/// A story's outcome.
#[derive(Debug, Deserialize)]
pub(crate) struct Story {
    /// Its id.
    #[serde(default)]
    pub(crate) id: String,
    /// `done`, `failed`, `skipped`, …
    pub(crate) status: String,
    /// The requests of an ACP agent epic rejected.
    #[serde(default)]
    pub(crate) permission_rejections: u32,
    /// What the judge said last (`judge cleared (round 1)`).
    #[serde(default)]
    pub(crate) judge: Option<String>,
}

/// A seat's line of the epic's usage.
#[derive(Debug, Deserialize)]
pub(crate) struct Seat {
    /// The seat's name.
    pub(crate) seat: String,
    /// Its usage, when it had any.
    #[serde(default)]
    pub(crate) usage: Option<SeatUsage>,
}

/// A seat's usage as the report has it.
#[derive(Debug, Deserialize)]
pub(crate) struct SeatUsage {
    /// Input tokens.
    pub(crate) input_tokens: u64,
    /// Output tokens.
    pub(crate) output_tokens: u64,
    /// The cost, where a price is known (none for opencode's model).
    #[serde(default)]
    pub(crate) cost_usd: Option<f64>,
    /// Where the figures come from: `reported`, `mixed`, `estimated`.
    pub(crate) source: String,
}

impl Report {
    /// The report of `text` (a `report.json` as epic writes it).
    pub(crate) fn parse(text: &str) -> Self {
        serde_json::from_str::<Envelope>(text)
            .map(|envelope| envelope.data)
            .unwrap_or_default()
    }

    /// The report of the file at `path`.
    pub(crate) fn read(path: &Path) -> Self {
        Self::parse(&fs::read_to_string(path).unwrap_or_default())
    }

    /// How many stories ended with `status` (`done`, `failed`, `skipped`).
    pub(crate) fn stories_with(&self, status: &str) -> usize {
        self.stories
            .iter()
            .filter(|story| story.status == status)
            .count()
    }

    /// The usage of the epic's seat `seat`.
    pub(crate) fn seat_usage(&self, seat: &str) -> Option<&SeatUsage> {
        self.seats
            .iter()
            .find(|line| line.seat == seat)
            .and_then(|line| line.usage.as_ref())
    }
}

/// The model server's steps file of `steps`: each step a JSON object on a line of its own.
pub(crate) fn steps(steps: &[Value]) -> String {
    let mut text = String::new();
    for step in steps {
        text.push_str(&step.to_string());
        text.push('\n');
    }
    text
}

/// Whether the steps file `steps` has a step doing `action` (`silent`, `limit`, …).
pub(crate) fn steps_do(steps: &str, action: &str) -> bool {
    steps
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|step| step.get("do").and_then(Value::as_str) == Some(action))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Report, events, requests, steps, steps_do};

    #[test]
    fn stories_are_counted_by_status() {
        // The shape of `report.json` (`epic_report::to_json` in its envelope), abridged: a flaky
        // gate's own `status` is not a story's.
        let report = Report::parse(
            r#"{
  "version": 1,
  "data": {
    "epic_id": "e",
    "stories": [
      {
        "id": "a",
        "status": "done",
        "judge": "judge cleared (round 1)"
      },
      {
        "id": "b",
        "status": "failed",
        "flaky_gates": [
          {
            "command": "make test",
            "status": "exit code 1"
          }
        ]
      },
      {
        "id": "c",
        "status": "done"
      }
    ]
  }
}
"#,
        );
        assert_eq!(report.stories_with("done"), 2);
        assert_eq!(report.stories_with("failed"), 1);
        assert_eq!(report.stories_with("skipped"), 0);
        assert_eq!(
            report.stories[0].judge.as_deref(),
            Some("judge cleared (round 1)")
        );
        assert_eq!(Report::parse("not json").stories_with("done"), 0);
    }

    #[test]
    fn a_seats_usage_is_the_epics_not_a_storys() {
        let report = Report::parse(
            r#"{"version": 1, "data": {
  "stories": [{"id": "a", "status": "done", "seats": [{"seat": "claude", "usage": {
    "input_tokens": 1, "output_tokens": 1, "cost_usd": 0.5, "source": "estimated"}}]}],
  "seats": [
    {"seat": "opencode", "usage": {"input_tokens": 3, "output_tokens": 4, "source": "estimated"}},
    {"seat": "claude", "turns": 2, "usage": {
      "input_tokens": 120, "output_tokens": 34, "cost_usd": 0.25, "source": "reported"}}
  ]}}"#,
        );
        let claude = report.seat_usage("claude").expect("claude's usage");
        assert_eq!((claude.input_tokens, claude.output_tokens), (120, 34));
        assert_eq!(claude.cost_usd, Some(0.25));
        assert_eq!(claude.source, "reported");
        // No price known: no cost.
        assert_eq!(report.seat_usage("opencode").expect("usage").cost_usd, None);
        assert!(report.seat_usage("codex").is_none());
    }

    #[test]
    fn a_server_log_line_is_read_typed() {
        // Lines as `epic-model-server` logs them (`serve` in its server.rs): a coder's request
        // answered with a file tool, Gemini CLI's streamed turn, a request of no API, and a
        // last line cut short while the server writes it.
        let logged = concat!(
            r#"{"method":"POST","path":"/v1/messages","bytes":2048,"api":"anthropic","model":"claude-sonnet-4-5","stream":true,"tools":["Bash","Write"],"kind":"code","key":"sk-home","tool_results":1,"answer":"write","note":"Note: your previous attempt looped","person_answer":"8080","calls":[{"name":"Write","args":{"file_path":"/work/case/repo/src/a/a.txt","content":"alpha\n"}}],"usage":{"input":512,"output":40}}"#,
            "\n",
            r#"{"method":"POST","path":"/v1beta/models/gemini-2.5-pro:streamGenerateContent","bytes":10,"api":"gemini-stream","kind":"judge","key":null,"tool_results":0,"answer":"text","calls":[],"usage":{"input":3,"output":7}}"#,
            "\n",
            r#"{"method":"GET","path":"/nowhere","bytes":0,"answer":"status 404"}"#,
            "\n",
            r#"{"method":"POST","path":"/v1/mess"#,
        );
        let requests = requests(logged);
        assert_eq!(requests.len(), 3);
        let coder = &requests[0];
        assert!(coder.of_api("anthropic") && coder.is("code") && coder.called());
        assert!(coder.called_one_of(&["Write", "Bash"]) && !coder.called_one_of(&["write_file"]));
        assert!(coder.calls_mention("src/a/a.txt") && !coder.calls_mention("src/b/b.txt"));
        assert_eq!(coder.key.as_deref(), Some("sk-home"));
        assert_eq!(coder.answer, "write");
        assert_eq!((coder.tool_results, coder.bytes), (1, 2048));
        assert!(
            coder
                .note
                .as_deref()
                .is_some_and(|note| note.starts_with("Note: your previous attempt"))
        );
        assert_eq!(coder.person_answer.as_deref(), Some("8080"));
        assert_eq!(requests[1].person_answer, None);
        let usage = coder.usage.as_ref().expect("usage");
        assert_eq!((usage.input, usage.output), (512, 40));
        // An API is a prefix: Gemini CLI's streamed turns are `gemini` requests too.
        assert!(requests[1].of_api("gemini") && requests[1].is("judge"));
        assert!(requests[1].key.is_none() && !requests[1].called());
        assert!(!requests[2].of_api("") && requests[2].kind.is_none());
        assert_eq!(requests[2].answer, "status 404");
    }

    #[test]
    fn events_are_read_by_kind_and_field() {
        let events = events(concat!(
            r#"{"kind":"seat_paused","seat":"claude","story":"a","reason":"usage limit","until":"2030-01-01T03:00:00Z"}"#,
            "\n",
            r#"{"kind":"turn_stalled","story":"a","role":"coder","seat":"claude","turn":1,"again":true}"#,
            "\n",
            r#"{"kind":"judge_verdict","story":"a","issues":[{"title":"unreadable verdict"}]}"#,
            "\n",
            r#"{"kind":"story_mer"#,
        ));
        assert_eq!(events.len(), 3);
        assert!(events[0].is("seat_paused") && events[0].text("seat") == Some("claude"));
        assert_eq!(events[0].text("reason"), Some("usage limit"));
        assert!(events[1].is("turn_stalled") && events[1].flag("again"));
        assert!(!events[0].flag("again"));
        assert!(events[2].mentions("unreadable verdict") && !events[1].mentions("unreadable"));
    }

    #[test]
    fn a_step_with_a_tab_and_control_characters_is_valid_json() {
        // The hand-written escape this replaced let a tab through raw, which JSON refuses in a
        // string.
        let text = "a\tb \"q\" \\ \n\r\u{0}\u{1f} é";
        let written = steps(&[
            json!({"when": "code", "do": "text", "text": text, "times": 1}),
            json!({"do": "silent"}),
        ]);
        assert_eq!(written.lines().count(), 2);
        assert!(!written.contains('\t') && written.chars().all(|c| c >= ' ' || c == '\n'));
        let first: serde_json::Value =
            serde_json::from_str(written.lines().next().expect("a line")).expect("valid JSON");
        assert_eq!(first["text"], text);
        assert!(steps_do(&written, "silent") && !steps_do(&written, "cut"));
    }
}
