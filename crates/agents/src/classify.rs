//! One classification of a failed agent turn, from what the agent printed: retried at once
//! ([`Class::Transient`]), paused until a reset ([`Class::UsageLimit`]), paused with a growing
//! probe ([`Class::Outage`]), the run stopped ([`Class::NotLoggedIn`]), or the story's failure
//! ([`Class::Other`]).
//!
//! The agents' wordings change between versions (docs/seats.md quotes those known, under
//! "Limits, outages, stalls and loops"): phrases are matched loosely and case-insensitively, a
//! reset time is read where the text gives one, and a usage or quota limit whose reset cannot be
//! read gets [`DEFAULT_LIMIT_WAIT`].

use std::time::Duration;

use jiff::civil::{Date, DateTime, Time};
use jiff::fmt::friendly::SpanParser;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, SpanRelativeTo, Timestamp};

/// The pause after a usage or quota limit whose reset time the text does not give (Gemini's
/// daily quota) or gives in a wording not recognised.
///
/// 15 minutes: long enough that a hard limit is not hammered (retrying a limit every few seconds
/// is what users of other orchestrators complain about: it can extend the block), short enough
/// that a short per-minute quota costs little; the pause repeats while the limit holds, bounded
/// by `--max-wait`.
pub const DEFAULT_LIMIT_WAIT: Duration = Duration::from_mins(15);

/// What a failed turn's output says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Overloaded, a 5xx, a short rate limit, a dropped connection: the same turn again after a
    /// backoff of seconds ([`crate::RetryPolicy`]).
    Transient,
    /// A usage or quota limit of the agent's account: the seat pauses until `resets`, or for
    /// [`DEFAULT_LIMIT_WAIT`] when the text gives no reset that could be read.
    UsageLimit {
        /// When the limit resets.
        resets: Option<Timestamp>,
    },
    /// The agent cannot reach its service (and gave up on its own retries).
    Outage,
    /// The agent is not logged in: no turn on it can succeed until a person logs in.
    NotLoggedIn,
    /// Anything else: the turn failed.
    Other,
}

impl Class {
    /// Whether the seat retries it by itself, with backoff.
    pub fn is_transient(self) -> bool {
        self == Self::Transient
    }
}

/// [`classify`] now, in the system's time zone.
pub fn classify_now(status: &str, text: &str) -> Class {
    classify(status, text, Timestamp::now(), &TimeZone::system())
}

/// Classifies a failed turn from its exit `status` in words (`exit code 41`) and the end of
/// its output `text`; `now` and the `local` time zone read resets given as a local time
/// (Codex's `try again at 3:28 PM`).
///
/// Checked in this order, so a limit message that also says `429` is a limit: not logged in,
/// usage limit, outage, transient, other.
pub fn classify(status: &str, text: &str, now: Timestamp, local: &TimeZone) -> Class {
    // ASCII lowercase keeps byte offsets, so the original text can be sliced where `lower` matched.
    let lower = text.to_ascii_lowercase();
    if is_not_logged_in(status, &lower) {
        Class::NotLoggedIn
    } else if is_usage_limit(&lower) {
        Class::UsageLimit {
            resets: reset_time(text, &lower, now, local),
        }
    } else if is_outage(&lower) {
        Class::Outage
    } else if is_transient(&lower) {
        Class::Transient
    } else {
        Class::Other
    }
}

/// The line of a not-logged-in failure's text that says so (trimmed, at most 300 characters),
/// for the message of a run stopped on it: the first line when it does (the error a structured
/// preset reported comes first), else the last that does (aider and opencode print their own
/// lines first, and aider the raw API body, wrapped, before its own sentence).
pub fn login_line(text: &str) -> Option<String> {
    let says = |line: &&str| is_not_logged_in("", &line.to_ascii_lowercase());
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next()?;
    let line = if says(&first) {
        first
    } else {
        lines.rfind(says)?
    };
    Some(line.chars().take(300).collect())
}

/// The command that logs `seat` in, for the message of a run stopped on it.
pub fn login_fix(seat: &str) -> String {
    match seat {
        "claude" => {
            "run `claude` in a terminal, then `/login` (or set ANTHROPIC_API_KEY)".to_owned()
        }
        "codex" => "run `codex login` (or `codex login --with-api-key`; with a model provider of \
                    its own, set the variable its `env_key` names)"
            .to_owned(),
        "gemini" => "set GEMINI_API_KEY=… (or run `gemini` once and sign in)".to_owned(),
        "aider" => "set the API key of aider's model (ANTHROPIC_API_KEY, OPENAI_API_KEY, …, or \
                    `api-key` in .aider.conf.yml)"
            .to_owned(),
        "opencode" => "run `opencode auth login` (or set its provider's key)".to_owned(),
        other => format!("log `{other}` in to its service"),
    }
}

/// Claude Code's and Codex's `Not logged in`, Claude's `/login` hints, Gemini's auth error
/// (exit 41, or its error JSON with `"code": 41`), and a key the API refused (a 401) as each CLI
/// renders it (see `tests/fixtures/served`): a revoked or mistyped key fails every turn of the
/// seat alike, so it stops the run as a missing login does.
fn is_not_logged_in(status: &str, lower: &str) -> bool {
    const PHRASES: &[&str] = &[
        "not logged in",
        "please run /login",
        "invalid api key",
        "auth method",
        // Codex: `unexpected status 401 Unauthorized: Incorrect API key provided`.
        "401 unauthorized",
        "incorrect api key",
        // Gemini CLI: `API key not valid`.
        "api key not valid",
        // Anthropic's 401 body (opencode prints its message alone), the type aider prints.
        "invalid x-api-key",
        "authentication_error",
        // aider: `The API provider is not able to authenticate you. Check your API key.`
        "not able to authenticate",
    ];
    // Gemini CLI ends its quota error with "switch to another /auth method": a suggestion, not
    // a missing login (its own auth errors say "Auth method" with no slash).
    let lower = lower.replace("/auth method", "/auth");
    let compact: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
    let code_41 = compact
        .match_indices("\"code\":41")
        .any(|(at, found)| !compact[at + found.len()..].starts_with(|c: char| c.is_ascii_digit()));
    PHRASES.iter().any(|phrase| lower.contains(phrase)) || code_41 || status == "exit code 41"
}

/// A usage or quota limit of the account, not a short throttle (`API Error: Rate limit reached`
/// is Claude Code's per-model throttle: transient).
fn is_usage_limit(lower: &str) -> bool {
    const PHRASES: &[&str] = &[
        "usage limit",
        "session limit",
        "weekly limit",
        "daily limit",
        "monthly limit",
        "-hour limit",
        "quota",
        "resource_exhausted",
        "usagelimitexceeded",
    ];
    // aider ends every rate limit with "Try again later or check your quotas": advice, not a
    // quota it ran out of.
    let lower = lower.replace("check your quotas", "");
    PHRASES.iter().any(|phrase| lower.contains(phrase))
        || (lower.contains("hit your") && lower.contains("limit"))
        || lower
            .replace("rate limit reached", "")
            .contains("limit reached")
}

/// Whether one line an agent streams says it cannot reach its service (Codex's
/// `Reconnecting... waiting for network`, repeated until it is killed).
pub fn is_outage_line(line: &str) -> bool {
    is_outage(&line.to_ascii_lowercase())
}

/// Claude Code's `Can't reach the API server` / `connection_failed`, Gemini's `fetch failed`,
/// Codex's `Reconnecting... waiting for network`, a name that does not resolve.
fn is_outage(lower: &str) -> bool {
    const PHRASES: &[&str] = &[
        "can't reach the api server",
        "cannot reach the api server",
        "connection_failed",
        "fetch failed",
        "waiting for network",
        "enotfound",
        "eai_again",
    ];
    // Claude Code labels a connection lost mid-stream `connection_failed`, as it does a server
    // it cannot reach: the stream it had was cut, which is transient (the turn again at once).
    !lower.contains("connection to the api was lost")
        && PHRASES.iter().any(|phrase| lower.contains(phrase))
}

/// Whether an agent's failure output looks transient: worth the same turn again after a pause.
///
/// Case-insensitive phrases of rate limits and unavailable services (`rate limit`, `too many
/// requests`, `overloaded`, `service unavailable`, `bad gateway`, `gateway timeout`, `internal
/// server error`, `temporarily unavailable`, `try again later`), of the network (`connection
/// reset`, `connection refused`, `econnreset`, `etimedout`, `timed out`, `socket hang up`), the
/// words the real CLIs print for a stream cut half way (aider: `peer closed connection`) and
/// Codex's for a 500 (`high demand`; see
/// `tests/fixtures/served`), and the HTTP statuses 429, 500, 502, 503, 504 and 529 standing alone
/// as numbers.
fn is_transient(lower: &str) -> bool {
    const PHRASES: &[&str] = &[
        "rate limit",
        "rate-limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "overloaded",
        "service unavailable",
        "temporarily unavailable",
        "bad gateway",
        "gateway timeout",
        "internal server error",
        "try again later",
        "connection reset",
        "connection refused",
        "connection closed",
        "econnreset",
        "econnrefused",
        "etimedout",
        "timed out",
        "socket hang up",
        "network error",
        // Claude Code's stream cut half way.
        "connection to the api was lost",
        // Codex on a 500 from its provider.
        "high demand",
        "temporary errors",
        // Gemini CLI's stream cut half way (`[API Error: terminated]`, undici's socket error).
        "api error: terminated",
        "other side closed",
        "und_err_socket",
        // aider's (litellm's, httpx's) stream cut half way.
        "peer closed connection",
        "incomplete chunked read",
    ];
    const STATUSES: &[&str] = &["429", "500", "502", "503", "504", "529"];
    if PHRASES.iter().any(|phrase| lower.contains(phrase)) {
        return true;
    }
    let bytes = lower.as_bytes();
    STATUSES.iter().any(|status| {
        lower.match_indices(status).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at + status.len()).copied();
            !before.is_some_and(|b| b.is_ascii_alphanumeric())
                && !after.is_some_and(|b| b.is_ascii_alphanumeric())
        })
    })
}

/// The reset time a limit message gives, in any of the wordings known; `None` when it gives
/// none that can be read.
fn reset_time(text: &str, lower: &str, now: Timestamp, local: &TimeZone) -> Option<Timestamp> {
    // Claude Code: `Claude AI usage limit reached|1767225600`.
    if let Some(at) = lower.find("limit reached|") {
        let digits: String = lower[at + "limit reached|".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(mut seconds) = digits.parse::<i64>() {
            // Milliseconds, should a version print them.
            if seconds > 100_000_000_000 {
                seconds /= 1000;
            }
            return Timestamp::from_second(seconds).ok();
        }
    }
    // Claude Code: `resets 3pm (Europe/Stockholm)`, `resets 8:30am (America/Los_Angeles)`.
    if let Some(at) = lower.find("resets ") {
        let rest = &text[at + "resets ".len()..];
        if let Some((hour, minute, after)) = clock(rest) {
            let zone = after
                .trim_start()
                .strip_prefix('(')
                .and_then(|zone| zone.split_once(')'))
                .and_then(|(name, _)| TimeZone::get(name.trim()).ok())
                .unwrap_or_else(|| local.clone());
            return next_at(now, &zone, hour, minute);
        }
    }
    // Codex: `try again at 3:28 PM.`, `Try again at Aug 18th, 2026 12:30 PM.`
    if let Some(at) = lower.find("try again at ") {
        let rest = &text[at + "try again at ".len()..];
        if let Some((hour, minute, _)) = clock(rest) {
            return next_at(now, local, hour, minute);
        }
        return dated(rest, local);
    }
    // Codex: `try again in 2 hours 5 minutes`; Gemini: `Please retry in 42.5s`.
    for phrase in ["try again in ", "retry in ", "retry after "] {
        if let Some(at) = lower.find(phrase)
            && let Some(wait) = span(&lower[at + phrase.len()..])
        {
            return add(now, wait);
        }
    }
    // Gemini: `retryDelay: "42s"` (also as JSON, `"retryDelay": "42s"`).
    if let Some(at) = lower.find("retrydelay") {
        let rest = lower[at + "retrydelay".len()..].trim_start_matches(['"', ':', ' ']);
        if let Some(wait) = span(rest) {
            return add(now, wait);
        }
    }
    None
}

/// `now` plus `wait`.
fn add(now: Timestamp, wait: Duration) -> Option<Timestamp> {
    now.checked_add(SignedDuration::try_from(wait).ok()?).ok()
}

/// A clock time at the start of `text`: `3pm`, `8:30am`, `3:28 PM`, `15:02`; the hour, the
/// minute and what follows.
fn clock(text: &str) -> Option<(i8, i8, &str)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(text);
    if n == 0 || n > 2 {
        return None;
    }
    let mut hour: i8 = text[..n].parse().ok()?;
    let mut rest = &text[n..];
    let mut minute = 0;
    if let Some(after) = rest.strip_prefix(':') {
        let m = digits(after);
        if m != 2 {
            return None;
        }
        minute = after[..m].parse().ok()?;
        rest = &after[m..];
    }
    let trimmed = rest.trim_start();
    let meridiem = trimmed.get(..2).map(str::to_ascii_lowercase);
    match meridiem.as_deref() {
        Some("am" | "pm")
            if !trimmed[2..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric()) =>
        {
            if !(1..=12).contains(&hour) {
                return None;
            }
            hour %= 12;
            if meridiem.as_deref() == Some("pm") {
                hour += 12;
            }
            rest = &trimmed[2..];
        }
        // A bare number is not a time unless it has minutes (`15:02`).
        _ if minute == 0 && !text[n..].starts_with(':') => return None,
        _ => {}
    }
    ((0..24).contains(&hour) && (0..60).contains(&minute)).then_some((hour, minute, rest))
}

/// The next instant at `hour:minute` in `zone`, after `now`: today's, or tomorrow's when today's
/// has passed.
fn next_at(now: Timestamp, zone: &TimeZone, hour: i8, minute: i8) -> Option<Timestamp> {
    let time = Time::new(hour, minute, 0, 0).ok()?;
    let today = now.to_zoned_datetime(zone.clone()).date();
    let at = |date: Date| {
        DateTime::from_parts(date, time)
            .to_zoned_datetime(zone.clone())
            .ok()
            .map(|zoned| zoned.timestamp())
    };
    match at(today)? {
        instant if instant > now => Some(instant),
        _ => at(today.tomorrow().ok()?),
    }
}

/// A date and time such as `Aug 18th, 2026 12:30 PM` in `zone`.
fn dated(text: &str, zone: &TimeZone) -> Option<Timestamp> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let mut words = text.split_whitespace();
    let month = words.next()?.to_ascii_lowercase();
    let month = MONTHS.iter().position(|m| month.starts_with(m))?;
    let day: String = words
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let year: String = words
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let rest: Vec<&str> = words.take(2).collect();
    let (hour, minute, _) = clock(&rest.join(" "))?;
    let date = Date::new(
        year.parse().ok()?,
        i8::try_from(month + 1).ok()?,
        day.parse().ok()?,
    )
    .ok()?;
    DateTime::from_parts(date, Time::new(hour, minute, 0, 0).ok()?)
        .to_zoned_datetime(zone.clone())
        .ok()
        .map(|zoned| zoned.timestamp())
}

/// A duration in jiff's friendly format, a day counted as 24 hours: `90s`, `1h30m`, `2d`,
/// `2 hours 5 minutes`, `42.5s`, `1 hour, 30 minutes`; `None` for anything else (a negative one,
/// `5m ago`, months and years included). Units come largest first, each once: `30m1h` is none.
///
/// Both readings of a duration rest on it, so they agree on what a unit is: the CLI's durations
/// (`--max-wait` and its kin) hold it to the contract's compact form (`90m`, `1h30m`: whole
/// numbers with `s`, `m`, `h`, `d`), and [`classify`] finds where one ends in an agent's message
/// (`try again in 2 hours 5 minutes.`) and reads it here.
pub fn duration(text: &str) -> Option<Duration> {
    static PARSER: SpanParser = SpanParser::new();
    let span = PARSER.parse_span(text).ok()?;
    let duration = span.to_duration(SpanRelativeTo::days_are_24_hours()).ok()?;
    Duration::try_from(duration).ok()
}

/// The most words a span in an agent's message takes: `1 day, 2 hours, 3 minutes and 4
/// seconds` is eight once `and` is dropped.
const SPAN_WORDS: usize = 10;

/// The span at the start of `text`, an agent's message: `2 hours 5 minutes`, `42.5s`, `42s`,
/// `1h30m`, `90 seconds`, `1 hour and 30 minutes`, read by [`duration`].
///
/// Looser than the CLI's durations on purpose: the words are the agent's, so the span ends
/// wherever its text goes on (`.`, `"}`, `To get more access…`): the candidate runs to the first
/// character no span holds, words come off its end until [`duration`] reads it, and `and`
/// joins two units as a space would.
fn span(text: &str) -> Option<Duration> {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | ',')))
        .unwrap_or(text.len());
    let mut words: Vec<&str> = text[..end]
        .split(' ')
        .filter(|word| !word.is_empty() && *word != "and")
        .take(SPAN_WORDS)
        .collect();
    while !words.is_empty() {
        if let Some(wait) = duration(words.join(" ").trim_end_matches(['.', ','])) {
            return Some(wait);
        }
        words.pop();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-04T14:00:00Z: a Friday, 15:00 in Stockholm, 14:00 in Lisbon, 06:00 in Los Angeles.
    fn now() -> Timestamp {
        "2026-12-04T14:00:00Z".parse().unwrap()
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn check(status: &str, text: &str, expected: Class) {
        let local = TimeZone::get("Europe/Paris").unwrap();
        assert_eq!(classify(status, text, now(), &local), expected, "{text}");
    }

    fn limit(resets: Option<&str>) -> Class {
        Class::UsageLimit {
            resets: resets.map(at),
        }
    }

    /// One capture of a real CLI (`tests/fixtures/agents/<cli>-<version>/<case>.*`).
    macro_rules! captured {
        ($dir:literal, $case:literal) => {
            (
                concat!($dir, "/", $case),
                include_str!(concat!(
                    "../tests/fixtures/agents/",
                    $dir,
                    "/",
                    $case,
                    ".stdout"
                )),
                include_str!(concat!(
                    "../tests/fixtures/agents/",
                    $dir,
                    "/",
                    $case,
                    ".stderr"
                )),
                include_str!(concat!(
                    "../tests/fixtures/agents/",
                    $dir,
                    "/",
                    $case,
                    ".exit"
                )),
            )
        };
    }

    /// What the real CLIs printed, offline and logged out, read as a turn of their preset reads
    /// it (`agent_output::decode`, then the failure's text): each is classified as the run must
    /// treat it.
    #[test]
    fn classifies_what_the_real_clis_printed() {
        use crate::agent_output;
        use crate::preset::Preset;
        use crate::tail::failure_tail;
        let table = [
            (
                Preset::Claude,
                captured!("claude-2.1.332", "logged-out"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Codex,
                captured!("codex-0.171.0", "offline"),
                Class::Outage,
            ),
            (
                Preset::Gemini,
                captured!("gemini-0.61.0", "logged-out"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Gemini,
                captured!("gemini-0.61.0", "offline"),
                Class::Outage,
            ),
            (
                Preset::Gemini,
                captured!("gemini-0.61.0", "untrusted"),
                Class::NotLoggedIn,
            ),
        ];
        for (preset, (name, stdout, stderr, exit), expected) in table {
            let decoded = agent_output::decode(preset, stdout, stderr);
            let text = failure_tail(decoded.error.as_deref(), stdout, stderr);
            let status = format!("exit code {}", exit.trim());
            let local = TimeZone::get("Europe/Paris").unwrap();
            assert_eq!(
                classify(&status, &text, now(), &local),
                expected,
                "{name}: {text}"
            );
        }
        // Codex never gives up on its own: the outage watch ends it once every line it streams
        // says it cannot reach its service.
        let (_, stdout, _, _) = captured!("codex-0.171.0", "offline");
        let last = stdout.lines().last().unwrap();
        assert!(is_outage_line(last), "{last}");
        // Claude Code's logged-out result object says so whatever its exit code.
        let (_, stdout, stderr, _) = captured!("claude-2.1.332", "logged-out");
        let decoded = agent_output::decode(Preset::Claude, stdout, stderr);
        assert_eq!(
            decoded.error.as_deref(),
            Some("Not logged in · Please run /login")
        );
        // Gemini CLI in an untrusted folder: its approval mode dropped is an error of the seat,
        // also when the turn itself works.
        let (_, _, stderr, _) = captured!("gemini-0.61.0", "untrusted");
        let notice: String = stderr.lines().take(2).collect::<Vec<_>>().join("\n");
        let decoded = agent_output::decode(
            Preset::Gemini,
            r#"{"session_id": "s", "response": "done", "stats": {}}"#,
            &notice,
        );
        assert!(
            decoded
                .error
                .as_deref()
                .is_some_and(|error| error.contains("Approval mode overridden")),
            "{decoded:?}"
        );
    }

    /// One capture of a real CLI against the scripted model server
    /// (`tests/fixtures/served/<cli>-<version>/<failure>.*`, `cargo xtask agents capture`).
    macro_rules! served {
        ($dir:literal, $case:literal) => {
            (
                concat!($dir, "/", $case),
                include_str!(concat!(
                    "../tests/fixtures/served/",
                    $dir,
                    "/",
                    $case,
                    ".stdout"
                )),
                include_str!(concat!(
                    "../tests/fixtures/served/",
                    $dir,
                    "/",
                    $case,
                    ".stderr"
                )),
                include_str!(concat!(
                    "../tests/fixtures/served/",
                    $dir,
                    "/",
                    $case,
                    ".exit"
                )),
            )
        };
    }

    /// What the real CLIs printed when the model server answered a 429 (each API's own limit
    /// form), a 529, a 500, cut its stream half way or went silent (the CLI killed at a
    /// deadline: exit 124), each read as its preset's turn reads it and classified as the run
    /// must treat it: a rate limit, an overload, a server error and a dropped stream are
    /// transient (retried, then the seat paused as an outage), Gemini's quota a usage limit
    /// with its reset, a silent turn nothing the classifier can name (the stall watchdog ends
    /// it before it gets here).
    #[test]
    #[expect(clippy::too_many_lines, reason = "one table of real outputs")]
    fn classifies_what_the_real_clis_printed_against_the_model_server() {
        use crate::agent_output;
        use crate::preset::Preset;
        use crate::tail::{ERROR_TAIL, failure_tail};
        let transient = Class::Transient;
        let table = [
            (Preset::Claude, served!("claude-2.1.332", "429"), transient),
            (Preset::Claude, served!("claude-2.1.332", "529"), transient),
            (Preset::Claude, served!("claude-2.1.332", "500"), transient),
            (Preset::Claude, served!("claude-2.1.332", "cut"), transient),
            (
                Preset::Claude,
                served!("claude-2.1.332", "silent"),
                Class::Other,
            ),
            (Preset::Codex, served!("codex-0.171.0", "429"), transient),
            (Preset::Codex, served!("codex-0.171.0", "529"), transient),
            (Preset::Codex, served!("codex-0.171.0", "500"), transient),
            (Preset::Codex, served!("codex-0.171.0", "cut"), transient),
            (
                Preset::Codex,
                served!("codex-0.171.0", "silent"),
                Class::Other,
            ),
            (
                Preset::Gemini,
                served!("gemini-0.61.0", "429"),
                limit(Some("2026-12-04T14:00:30Z")),
            ),
            (Preset::Gemini, served!("gemini-0.61.0", "529"), transient),
            (Preset::Gemini, served!("gemini-0.61.0", "500"), transient),
            (Preset::Gemini, served!("gemini-0.61.0", "cut"), transient),
            (
                Preset::Gemini,
                served!("gemini-0.61.0", "silent"),
                Class::Other,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "429"),
                transient,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "529"),
                transient,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "500"),
                transient,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "cut"),
                transient,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "silent"),
                Class::Other,
            ),
            (
                Preset::Claude,
                served!("claude-2.1.332", "401"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Codex,
                served!("codex-0.171.0", "401"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Gemini,
                served!("gemini-0.61.0", "401"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "401"),
                Class::NotLoggedIn,
            ),
            (
                Preset::Aider,
                served!("aider-0.86.2", "401"),
                Class::NotLoggedIn,
            ),
            (Preset::Aider, served!("aider-0.86.2", "429"), transient),
            (Preset::Aider, served!("aider-0.86.2", "529"), transient),
            (Preset::Aider, served!("aider-0.86.2", "500"), transient),
            (Preset::Aider, served!("aider-0.86.2", "cut"), transient),
            (
                Preset::Aider,
                served!("aider-0.86.2", "silent"),
                Class::Other,
            ),
        ];
        let mut wrong = Vec::new();
        for (preset, (name, stdout, stderr, exit), expected) in table {
            let decoded = agent_output::decode(preset, stdout, stderr);
            // aider gives up with exit 0 and no reply in its log: the turn reads it so.
            let error = decoded.error.clone().or_else(|| {
                (preset == Preset::Aider && exit.trim() == "0")
                    .then(|| crate::tail::NO_LOGGED_REPLY.to_owned())
            });
            let (stdout, stderr) = (
                &stdout[stdout.ceil_char_boundary(stdout.len().saturating_sub(ERROR_TAIL))..],
                &stderr[stderr.ceil_char_boundary(stderr.len().saturating_sub(ERROR_TAIL))..],
            );
            let text = failure_tail(error.as_deref(), stdout, stderr);
            let status = format!("exit code {}", exit.trim());
            let local = TimeZone::get("Europe/Paris").unwrap();
            let class = classify(&status, &text, now(), &local);
            if class != expected {
                wrong.push(format!(
                    "{name}: {class:?}, expected {expected:?}; error {:?}",
                    decoded.error
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// The line a run stopped on a refused key shows: each CLI's own words for the 401.
    #[test]
    fn a_refused_keys_line_is_the_clis_own_words() {
        use crate::agent_output;
        use crate::preset::Preset;
        use crate::tail::{NO_LOGGED_REPLY, failure_tail};
        let table = [
            (
                Preset::Claude,
                served!("claude-2.1.332", "401"),
                "Invalid API key · Fix external API key",
            ),
            (
                Preset::Codex,
                served!("codex-0.171.0", "401"),
                "unexpected status 401 Unauthorized: Incorrect API key provided",
            ),
            (
                Preset::Gemini,
                served!("gemini-0.61.0", "401"),
                "API key not valid",
            ),
            (
                Preset::Opencode,
                served!("opencode-1.18.33", "401"),
                "Error: invalid x-api-key",
            ),
            (
                Preset::Aider,
                served!("aider-0.86.2", "401"),
                "The API provider is not able to authenticate you. Check your API key.",
            ),
        ];
        for (preset, (name, stdout, stderr, _), expected) in table {
            let decoded = agent_output::decode(preset, stdout, stderr);
            let error = decoded
                .error
                .or_else(|| (preset == Preset::Aider).then(|| NO_LOGGED_REPLY.to_owned()));
            let text = failure_tail(error.as_deref(), stdout, stderr);
            let line = login_line(&text).unwrap_or_default();
            assert!(line.contains(expected), "{name}: {line:?}");
        }
        assert_eq!(login_line("all fine\nnothing here"), None);
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "one table of real texts")]
    fn classifies_real_texts() {
        let cases: &[(&str, &str, Class)] = &[
            // Transient: seconds of backoff.
            (
                "exit code 1",
                "API Error: Rate limit reached",
                Class::Transient,
            ),
            (
                "exit code 1",
                "Error: 429 Too Many Requests",
                Class::Transient,
            ),
            (
                "exit code 1",
                "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
                Class::Transient,
            ),
            (
                "exit code 1",
                "HTTP 503 Service Unavailable",
                Class::Transient,
            ),
            ("exit code 1", "read ECONNRESET", Class::Transient),
            // Usage limits, with the reset they give.
            (
                "exit code 1",
                "Claude AI usage limit reached|1767225600",
                limit(Some("2026-01-01T00:00:00Z")),
            ),
            (
                "exit code 0",
                "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Claude AI usage limit reached|1767225600\"}",
                limit(Some("2026-01-01T00:00:00Z")),
            ),
            // 15:00 in Stockholm now: 3pm has passed (just), so tomorrow's.
            (
                "exit code 1",
                "5-hour limit reached ∙ resets 3pm (Europe/Stockholm)",
                limit(Some("2026-12-05T14:00:00Z")),
            ),
            (
                "exit code 1",
                "You've hit your limit · resets 4pm (Europe/Lisbon)",
                limit(Some("2026-12-04T16:00:00Z")),
            ),
            (
                "exit code 1",
                "You've hit your session limit · resets 8:30am (America/Los_Angeles)",
                limit(Some("2026-12-04T16:30:00Z")),
            ),
            (
                "exit code 1",
                "You've hit your weekly limit · resets 1am (Europe/Lisbon)",
                limit(Some("2026-12-05T01:00:00Z")),
            ),
            // Codex: local time (Paris in these tests), a date, a span.
            (
                "exit code 1",
                "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again at 3:28 PM.",
                limit(Some("2026-12-04T14:28:00Z")),
            ),
            (
                "exit code 1",
                "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 9:05 AM.",
                limit(Some("2026-12-05T08:05:00Z")),
            ),
            (
                "exit code 1",
                "{\"type\":\"turn.failed\",\"error\":{\"message\":\"You've hit your usage limit. Try again at Aug 18th, 2027 12:30 PM.\"}}",
                limit(Some("2027-08-18T10:30:00Z")),
            ),
            (
                "exit code 1",
                "You've hit your usage limit. To get more access now, try again in 2 hours 5 minutes.",
                limit(Some("2026-12-04T16:05:00Z")),
            ),
            // Gemini: a retry delay, or none.
            (
                "exit code 1",
                "[API Error: got status: 429 Too Many Requests. {\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"42s\"}]}}]",
                limit(Some("2026-12-04T14:00:42Z")),
            ),
            (
                "exit code 1",
                "RESOURCE_EXHAUSTED: You exceeded your current quota. Please retry in 42.5s.",
                limit(Some("2026-12-04T14:00:42.5Z")),
            ),
            (
                "exit code 1",
                "You have exhausted your daily quota on this model. Please wait and try again later.",
                limit(None),
            ),
            // An unknown wording: the default wait.
            (
                "exit code 1",
                "Monthly limit reached for your plan.",
                limit(None),
            ),
            // Outages.
            (
                "exit code 1",
                "{\"type\":\"result\",\"is_error\":true,\"api_error\":\"connection_failed\",\"result\":\"API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)\"}",
                Class::Outage,
            ),
            (
                "exit code 1",
                "{\"error\":{\"type\":\"Error\",\"message\":\"exception TypeError: fetch failed sending request\",\"code\":1}}",
                Class::Outage,
            ),
            (
                "exit code 1",
                "{\"type\":\"error\",\"message\":\"Reconnecting... waiting for network (Connection failed: error sending request)\"}",
                Class::Outage,
            ),
            // Not logged in.
            (
                "exit code 1",
                "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Not logged in · Please run /login\"}",
                Class::NotLoggedIn,
            ),
            ("exit code 1", "Not logged in", Class::NotLoggedIn),
            (
                "exit code 41",
                "{\"session_id\":\"x\",\"error\":{\"type\":\"Error\",\"message\":\"Please set an Auth method in your settings.json\",\"code\": 41}}",
                Class::NotLoggedIn,
            ),
            // Other.
            (
                "exit code 1",
                "error[E0425]: cannot find value `x` in this scope",
                Class::Other,
            ),
            ("exit code 2", "failed at line 5029", Class::Other),
        ];
        for (status, text, expected) in cases {
            check(status, text, *expected);
        }
    }

    #[test]
    fn transient_phrases_and_statuses() {
        let transient = |text: &str| is_transient(&text.to_ascii_lowercase());
        assert!(transient("Error: 429 Too Many Requests"));
        assert!(transient("API error (overloaded_error): Overloaded"));
        assert!(transient("read ECONNRESET"));
        assert!(!transient(
            "error[E0425]: cannot find value `x` in this scope"
        ));
        assert!(!transient("failed at line 5029"));
        assert!(transient("HTTP 503"));
        assert!(transient("status=502;"));
        assert!(!transient("id 15003"));
        assert!(!transient("no such file"));
    }

    #[test]
    fn clocks_and_spans() {
        assert_eq!(clock("3pm (x)").map(|(h, m, _)| (h, m)), Some((15, 0)));
        assert_eq!(clock("12am").map(|(h, m, _)| (h, m)), Some((0, 0)));
        assert_eq!(clock("12:15 PM.").map(|(h, m, _)| (h, m)), Some((12, 15)));
        assert_eq!(clock("15:02").map(|(h, m, _)| (h, m)), Some((15, 2)));
        assert_eq!(clock("2 hours"), None);
        assert_eq!(clock("13pm"), None);
        assert_eq!(span("1h30m"), Some(Duration::from_mins(90)));
        assert_eq!(span("90 seconds"), Some(Duration::from_secs(90)));
        assert_eq!(span("later"), None);
    }

    #[test]
    fn durations_are_jiffs_friendly_format() {
        for (text, secs) in [
            ("90s", 90),
            ("90m", 90 * 60),
            ("6h", 6 * 3600),
            ("1h30m", 90 * 60),
            ("1h 30m", 90 * 60),
            ("2d", 2 * 86_400),
            ("1w", 7 * 86_400),
            ("2 hours 5 minutes", 2 * 3600 + 5 * 60),
            ("1 hour, 30 minutes", 90 * 60),
            ("4h 12m", 4 * 3600 + 12 * 60),
            ("30 minutes", 30 * 60),
            ("0s", 0),
        ] {
            assert_eq!(duration(text), Some(Duration::from_secs(secs)), "{text}");
        }
        assert_eq!(duration("42.5s"), Some(Duration::from_millis(42_500)));
        assert_eq!(duration("1.5h"), Some(Duration::from_mins(90)));
        assert_eq!(duration("250ms"), Some(Duration::from_millis(250)));
        for text in [
            "",
            "later",
            "6",
            "h",
            "30m1h",
            "1h1h",
            "-5m",
            "5m ago",
            "1mo",
            "1y",
            "1h and 30m",
            "1 hour.",
            "in 5 minutes",
        ] {
            assert_eq!(duration(text), None, "{text}");
        }
    }

    #[test]
    fn a_span_ends_where_the_message_goes_on() {
        for (text, wait) in [
            ("2 hours 5 minutes.", Duration::from_mins(2 * 60 + 5)),
            (
                "2 hours 5 minutes. To get more access now, visit",
                Duration::from_mins(2 * 60 + 5),
            ),
            ("42.5s.", Duration::from_millis(42_500)),
            ("42s\"}]}}]", Duration::from_secs(42)),
            ("1 hour and 30 minutes", Duration::from_mins(90)),
            (
                "1 day, 2 hours, 3 minutes and 4 seconds",
                Duration::from_secs(93_784),
            ),
            ("  4h 12m (or so)", Duration::from_mins(4 * 60 + 12)),
            ("30 minutes or so", Duration::from_mins(30)),
            ("90 seconds", Duration::from_secs(90)),
            ("5 minutes 2 hours", Duration::from_mins(5)),
        ] {
            assert_eq!(span(text), Some(wait), "{text}");
        }
        for text in ["", "later", "soon, in 5 minutes", "-5m", "(5m)", "a moment"] {
            assert_eq!(span(text), None, "{text}");
        }
    }

    proptest::proptest! {
        /// Whatever jiff writes in its friendly format, in any of its designators, is read back
        /// at the start of a message, whatever the message says after it.
        #[test]
        fn a_span_jiff_writes_is_read_back(
            hours in 0_i64..1000,
            minutes in 0_i64..60,
            seconds in 0_i64..60,
            designator in 0_usize..3,
            after in "[\"');!\\]}][ -~]{0,40}",
        ) {
            use jiff::fmt::friendly::{Designator, SpanPrinter};
            let written = jiff::Span::new()
                .hours(hours)
                .minutes(minutes)
                .seconds(seconds);
            let designator = [Designator::Compact, Designator::Short, Designator::Verbose][designator];
            let text = SpanPrinter::new().designator(designator).span_to_string(&written);
            let expected = u64::try_from(hours * 3600 + minutes * 60 + seconds).unwrap();
            proptest::prop_assert_eq!(
                span(&format!("{text}{after}")),
                Some(Duration::from_secs(expected)),
                "{}", text
            );
        }

        /// No message makes the reading panic.
        #[test]
        fn any_text_is_read_without_panic(text in "\\PC{0,80}") {
            let _ = span(&text);
            let _ = duration(&text);
        }
    }

    #[test]
    fn login_fixes_name_the_command() {
        assert!(login_fix("claude").contains("/login"));
        assert!(login_fix("codex").contains("codex login"));
        assert!(login_fix("gemini").contains("GEMINI_API_KEY"));
    }
}
