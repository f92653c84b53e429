//! The options of `epic run`, each defined once ([`RunOptions`]), and how their three layers
//! meet: the flags over `epic.toml` over the executor's defaults.
//!
//! [`RunOptions`] is at once the command line's run options (clap), the file `epic.toml` (serde:
//! every key optional, unknown keys refused), `epic config`'s output, and the file's JSON Schema
//! (`epic schema config`); each field's doc comment is its `--help` text and its schema
//! description. A new option is one field (its doc, its flag's value name) and one line in each
//! of the two conversions from and to the executor's `RunConfig`, whose types differ; the rest
//! is generic over the fields. By concern:
//!
//! - `options`: [`RunOptions`], one layer of options: read from `epic.toml`, laid over another
//!   ([`RunOptions::over`]), at the defaults ([`RunOptions::defaults`], read from the executor's
//!   `RunConfig::new`, the one place they are written), the keys in contract order ([`keys`]);
//! - `flags`: the options each command takes as flags, only those it reads ([`OptionsOf`]);
//! - `resolve`: the flags over the file over the defaults ([`resolve()`]), with the last run's
//!   options between them for a run that may follow another ([`resolve_rerun`]), and the
//!   executor's `RunConfig` from them ([`Resolved::run_config`]);
//! - `seats`: a seat (`seats::SeatSpec`), a role's roster ([`RosterSpec`]), the named seats of
//!   `[seats]` (`seats::NamedSeat`);
//! - `seat_env`: a named seat's variables (`seat_env::SeatEnv`): which hold a secret, by name
//!   (never written out in `epic.toml`, only referenced: `${NAME}`), and the references read
//!   from epic's environment;
//! - `values`: the value types ([`Count`], [`Seconds`], [`Wait`], …), which check
//!   themselves the same way from a flag and from the file;
//! - `rules`: the house rules every prompt carries ([`house_rules`]);
//! - `error`: what is wrong with an `epic.toml`, and the hints that go with it ([`ConfigError`]).

mod error;
mod flags;
mod options;
mod resolve;
mod rules;
mod seat_env;
mod seats;
#[cfg(test)]
mod test_support;
mod values;

pub(crate) use error::{ConfigError, ParseError};
pub(crate) use flags::{ForLanding, ForPlanning, ForRun, OptionsOf};
pub(crate) use options::{FILE_NAME, RunOptions, keys};
pub(crate) use resolve::{
    LastRun, Resolved, check_seats, exposed, merged, resolve, resolve_rerun, user_home,
};
pub(crate) use rules::house_rules;
pub(crate) use seats::{NamedSeats, RosterSpec};
pub(crate) use values::{
    Count, Dollars, GateJunit, NonBlank, PriceOverride, Reruns, Seconds, Silence, StorePath, Wait,
};
