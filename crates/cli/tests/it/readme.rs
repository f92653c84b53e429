//! README.md stays a front door and the guides under docs/ stay true to the code: the README
//! keeps its set-up commands, names every command and links every guide; docs/commands.md has a
//! row for every command; docs/seats.md shows every agent preset's exact command line, per role.

use crate::util::{Dir, workspace_root};

/// The most lines README.md may hold: past this it is a manual again, and the depth belongs in
/// a guide under docs/.
const README_MAX_LINES: usize = 400;

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).unwrap_or_else(|_| panic!("{path}"))
}

#[test]
fn the_readme_is_a_front_door_with_its_set_up_commands() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the depth into a guide \
         under docs/"
    );
    for command in ["cargo run --release -p epic -- demo", "cargo xtask ci"] {
        assert!(
            readme.lines().any(|line| line.starts_with(command)),
            "README.md's set-up no longer gives `{command}`"
        );
    }
}

#[test]
fn every_guide_is_linked_from_the_readme() {
    let readme = read("README.md");
    let mut guides: Vec<String> = std::fs::read_dir(workspace_root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| {
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    guides.sort();
    assert!(guides.len() > 5, "{guides:?}");
    for guide in guides {
        assert!(
            readme.contains(&format!("](docs/{guide})")),
            "README.md does not link docs/{guide}"
        );
    }
}

#[test]
fn every_command_is_in_the_readme_and_in_the_commands_guide() {
    let help = Dir::new().run(&["--help"]);
    help.assert_code(0);
    let commands: Vec<&str> = help
        .stdout
        .split("Commands:\n")
        .nth(1)
        .expect("`epic --help` lists its commands")
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.contains(&"run"), "{help}");
    let readme = read("README.md");
    let guide = read("docs/commands.md");
    for command in commands {
        let row = format!("| `epic {command}");
        assert!(
            readme.contains(&row),
            "README.md's commands lack `epic {command}`"
        );
        assert!(
            guide.contains(&row),
            "docs/commands.md has no row for `epic {command}`"
        );
    }
}

#[test]
fn every_preset_command_line_is_in_the_seats_guide() {
    let seats = read("docs/seats.md");
    let roles = [
        epic_agents::Role::Coder,
        epic_agents::Role::Planner,
        epic_agents::Role::Judge,
        epic_agents::Role::Reviewer,
        epic_agents::Role::Architect,
    ];
    for (preset, role) in epic_agents::Preset::ALL
        .into_iter()
        .flat_map(|preset| roles.map(|role| (preset, role)))
    {
        let line = preset.role_command_line(role);
        assert!(
            seats.contains(&format!("`{line}`")),
            "docs/seats.md does not show the {preset} preset's command line `{line}`"
        );
    }
}
