//! Every generated script passes the real shellcheck for its dialect with no
//! findings, and every disable comment carries a reason on the same line.

use crate::support;

use std::process::Command;

#[test]
fn generated_scripts_are_shellcheck_clean() {
    let have = Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        if std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1") {
            panic!("shellcheck is not installed (SHFORGE_REQUIRE_SHELLS=1)");
        }
        support::loud("SKIPPING shellcheck test: shellcheck not installed");
        return;
    }
    // Every script of the catalog, as generated/manifest.json lists it
    // (the golden test holds generated/ to the catalog).
    let dir = support::root().join("generated");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let catalog = manifest["files"].as_array().unwrap();
    assert!(!catalog.is_empty());
    for e in catalog {
        let file = e["file"].as_str().unwrap();
        let path = dir.join(file);
        let shell = match e["dialect"].as_str().unwrap() {
            "posix" => "sh",
            "bash" => "bash",
            other => panic!("{file}: dialect {other:?}"),
        };
        let mut c = Command::new("shellcheck");
        c.args(["--shell", shell, "--severity", "style"]).arg(&path);
        let out = support::run(c);
        assert!(
            out.status.success(),
            "shellcheck finds issues in {}:\n{}",
            file,
            String::from_utf8_lossy(&out.stdout)
        );
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(rest) = line.split("shellcheck disable=").nth(1) {
                let reason = rest
                    .split_once(' ')
                    .map(|(_, r)| r.trim_start_matches(['#', ' ']))
                    .unwrap_or("");
                assert!(
                    !reason.trim().is_empty(),
                    "{file}:{}: disable without a reason",
                    n + 1
                );
            }
        }
    }
    support::loud(&format!(
        "shellcheck: {} generated scripts clean",
        catalog.len()
    ));
}
