//! README.md stays true to the code: every agent preset's exact command line, per role, is documented.

use crate::util::workspace_root;

#[test]
fn every_preset_command_line_is_in_the_readme() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
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
            readme.contains(&format!("`{line}`")),
            "README.md does not show the {preset} preset's command line `{line}`"
        );
    }
}
