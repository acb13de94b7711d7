//! The shell matrix itself: every shell found runs a trivial POSIX script,
//! and the run says which shells it used (fails under
//! SHFORGE_REQUIRE_SHELLS=1 when one is missing).

use crate::support;

#[test]
fn every_shell_of_the_matrix_runs() {
    let shells = support::posix_shells();
    assert!(!shells.is_empty(), "no shell found at all");
    for shell in &shells {
        let out = support::run(shell.command_c("x='a b'; set -- $x; printf '%s:%s' \"$#\" \"$2\""));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "2:b",
            "{}",
            shell.name
        );
    }
    for bash in support::bashes() {
        let out = support::run(bash.command_c("a=(x y); printf '%s' \"${#a[@]}\""));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2", "{}", bash.name);
    }
    support::report("every_shell_of_the_matrix_runs", &shells);
}

#[test]
fn the_bash_matrix_holds_every_required_release() {
    // CI names all eight releases (3.2 to 5.3) in SHFORGE_REQUIRE_BASHES, so a
    // release that went missing fails here instead of shrinking the matrix.
    let found: Vec<String> = support::bashes().iter().map(|b| b.name.clone()).collect();
    for release in support::required_bash_releases() {
        let prefix = format!("bash-{release}.");
        assert!(
            found.iter().any(|name| name.starts_with(&prefix)),
            "SHFORGE_REQUIRE_BASHES names bash {release}, but the matrix holds only: {}",
            found.join(", ")
        );
    }
}
