//! Files a test writes and reads: anywhere under a directory, executable scripts, text compared
//! without its order.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Writes `contents` to `rel` under `dir`, creating directories.
pub fn write_in(dir: &Path, rel: &str, contents: impl AsRef<[u8]>) {
    write(&dir.join(rel), contents);
}

/// Writes `contents` at `path`, creating its directory.
pub fn write(path: &Path, contents: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    std::fs::write(path, contents).expect("write file");
}

/// Writes an executable (mode 755) file at `path` with exactly `text` (which names its
/// interpreter: `#!/bin/sh` …), creating its directory.
pub fn executable(path: &Path, text: &str) {
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Writes an executable shell script at `path`: `#!/bin/sh`, a newline, then `body`.
pub fn script(path: &Path, body: &str) {
    executable(path, &format!("#!/bin/sh\n{body}"));
}

/// The lines of `text`, sorted, without empty ones.
pub fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}
