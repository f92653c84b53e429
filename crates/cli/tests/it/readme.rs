//! README.md stays true to the code: every agent preset's exact command line is documented.

use crate::util::workspace_root;

#[test]
fn every_preset_command_line_is_in_the_readme() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    for preset in epic_executor::Preset::ALL {
        let line = preset.command_line();
        assert!(
            readme.contains(&format!("`{line}`")),
            "README.md does not show the {preset} preset's command line `{line}`"
        );
    }
}
