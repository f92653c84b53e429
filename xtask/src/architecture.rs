//! The part of ARCHITECTURE.md the manifests decide: the table of the workspace's crates, each
//! with the crates of the workspace it depends on and whether it is async (depends on tokio),
//! between two markers. `cargo xtask gen` writes it from `crates/*/Cargo.toml`, in the order of
//! tidy's layer table; tidy fails when the document's table differs from what it would write
//! ([`check`]), so the map never drifts from the code; README's layout and `crates/README.md`
//! name every crate.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::layers::{LAYERS, normal_dependencies};

/// The line that opens the generated table.
const START: &str = "<!-- written by `cargo xtask gen` from the crates' manifests: do not edit -->";

/// The line that closes it.
const END: &str = "<!-- end of what `cargo xtask gen` writes -->";

/// The document.
const DOCUMENT: &str = "ARCHITECTURE.md";

/// Rewrites the table in ARCHITECTURE.md.
pub(crate) fn write(root: &Path) -> Result<(), String> {
    let path = root.join(DOCUMENT);
    let text = fs::read_to_string(&path).map_err(|error| format!("{DOCUMENT}: {error}"))?;
    let written = replaced(&text, &table(root)?)?;
    if written != text {
        fs::write(&path, written).map_err(|error| format!("{DOCUMENT}: {error}"))?;
    }
    Ok(())
}

/// Adds a problem when ARCHITECTURE.md's table is not what [`write()`] would write, and for
/// each crate that README's layout or `crates/README.md` does not name.
pub(crate) fn check(root: &Path, problems: &mut Vec<String>) {
    for listing in ["README.md", "crates/README.md"] {
        let text = fs::read_to_string(root.join(listing)).unwrap_or_default();
        for (dir, package, _) in LAYERS {
            if !text.contains(&format!("`{package}`")) {
                problems.push(format!(
                    "{listing}: names no `{package}` (crates/{dir}): add it to the list of crates"
                ));
            }
        }
    }
    let text = fs::read_to_string(root.join(DOCUMENT)).unwrap_or_default();
    match table(root).and_then(|table| replaced(&text, &table)) {
        Ok(written) if written == text => {}
        Ok(_) => problems.push(format!(
            "{DOCUMENT}: the table of crates is not the manifests' (a dependency or an async \
             crate changed): run `cargo xtask gen`"
        )),
        Err(error) => problems.push(error),
    }
}

/// `text` with what lies between the markers replaced by `table`.
fn replaced(text: &str, table: &str) -> Result<String, String> {
    let missing =
        || format!("{DOCUMENT}: the markers of the generated table of crates are missing");
    let start = text.find(START).ok_or_else(missing)? + START.len();
    let end = text[start..].find(END).ok_or_else(missing)? + start;
    Ok(format!("{}\n{table}{}", &text[..start], &text[end..]))
}

/// The table: a row per crate of [`LAYERS`], its package, the workspace crates its
/// `[dependencies]` name (by folder, in layer order) and whether it depends on tokio.
fn table(root: &Path) -> Result<String, String> {
    let mut out = String::from(
        "| crate | package | depends on (of the workspace) | async |\n| --- | --- | --- | --- |\n",
    );
    for (dir, package, _) in LAYERS {
        let manifest = root.join("crates").join(dir).join("Cargo.toml");
        let text = fs::read_to_string(&manifest)
            .map_err(|error| format!("crates/{dir}/Cargo.toml: {error}"))?;
        let dependencies = normal_dependencies(&text);
        let internal: Vec<String> = LAYERS
            .iter()
            .filter(|(_, other, _)| dependencies.iter().any(|name| name == other))
            .map(|(other_dir, _, _)| format!("`{other_dir}`"))
            .collect();
        let arrows = if internal.is_empty() {
            "none".to_owned()
        } else {
            internal.join(", ")
        };
        let async_ = if dependencies.iter().any(|name| name == "tokio") {
            "yes"
        } else {
            "no"
        };
        // Writing to a String cannot fail.
        let _ = writeln!(out, "| `{dir}` | `{package}` | {arrows} | {async_} |");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_goes_between_the_markers_and_nowhere_else() {
        let text = format!("intro\n{START}\nold\n{END}\nrest\n");
        assert_eq!(
            replaced(&text, "| new |\n").expect("markers"),
            format!("intro\n{START}\n| new |\n{END}\nrest\n")
        );
        assert!(replaced("no markers", "x").is_err());
    }

    #[test]
    fn every_crate_of_the_layers_has_a_row() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let table = table(&root).expect("the manifests read");
        for (dir, package, _) in LAYERS {
            assert!(
                table.contains(&format!("| `{dir}` | `{package}` |")),
                "{dir}"
            );
        }
    }
}
