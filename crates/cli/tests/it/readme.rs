//! docs/seats.md stays true to the code: every agent preset's exact command line, per role, is
//! documented.

use crate::util::workspace_root;

#[test]
fn every_preset_command_line_is_in_the_seats_guide() {
    let seats =
        std::fs::read_to_string(workspace_root().join("docs/seats.md")).expect("docs/seats.md");
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
