//! Symbolic links a story adds or changes: out of the repository, into `.git`, into a sibling's
//! owned paths or a shared read-only path.

use epic_perimeter::{LinkProblem, check, check_links};
use epic_story_plan::path::LinkEscape;
use epic_story_plan::{Story, StoryPlan};

fn plan() -> StoryPlan {
    StoryPlan {
        epic_id: "shop".into(),
        epic: String::new(),
        stories: vec![
            Story::new("cart", "Cart", ["src/cart", "docs/cart.md"]).sharing(["src/kit"]),
            Story::new("home", "Home", ["src/home"]).sharing(["assets/logo.svg"]),
            Story::new("bad", "Unvalidated", ["/", ""]),
        ],
    }
}

/// The problems of each link of story `cart`, `None` for a link it may have.
fn check_cart(links: &[(&str, &str)]) -> Vec<Option<LinkProblem>> {
    let plan = plan();
    let found = check_links(links.iter().copied(), &plan.stories[0], &plan);
    links
        .iter()
        .map(|(link, _)| {
            found
                .iter()
                .find(|found| found.link == *link)
                .map(|found| found.problem.clone())
        })
        .collect()
}

#[test]
fn links_that_leave_the_repository_or_enter_git_are_refused() {
    use LinkEscape::{AboveRoot, Absolute, GitDir};
    assert_eq!(
        check_cart(&[
            ("src/cart/passwd", "/etc/passwd"),
            ("src/cart/out", "../../../outside.txt"),
            ("src/cart/far", &"../".repeat(400)),
            ("src/cart/hooks", "../../.git/hooks"),
            ("docs/cart.md", ".GIT/config"),
        ]),
        [
            Some(LinkProblem::Escapes(Absolute)),
            Some(LinkProblem::Escapes(AboveRoot)),
            Some(LinkProblem::Escapes(AboveRoot)),
            Some(LinkProblem::Escapes(GitDir)),
            Some(LinkProblem::Escapes(GitDir)),
        ]
    );
}

#[test]
fn links_into_a_siblings_paths_or_a_shared_path_are_refused_and_others_pass() {
    let home = || Some(LinkProblem::IntoStory("home".into()));
    assert_eq!(
        check_cart(&[
            ("src/cart/sibling", "../home/page.tsx"),
            ("src/cart/above", ".."),
            ("src/cart/root", "../.."),
            ("src/cart/kit", "../kit/button.ts"),
            ("src/cart/logo", "../../assets/logo.svg"),
            ("src/cart/own", "./item.rs"),
            ("src/cart/own-doc", "../../docs/cart.md"),
            ("src/cart/readme", "../../README.md"),
            ("src/cart/home-ish", "../home-old/x"),
            ("src/cart/backslash", "..\\home\\page.tsx"),
        ]),
        [
            home(),
            home(),
            home(),
            Some(LinkProblem::IntoShared("src/kit".into())),
            Some(LinkProblem::IntoShared("assets/logo.svg".into())),
            None,
            None,
            None,
            None,
            None,
        ]
    );
}

#[test]
fn links_outside_the_owned_paths_are_left_to_the_path_check() {
    let plan = plan();
    let cart = &plan.stories[0];
    let links = [("src/home/x", "/etc/passwd"), ("README.md", "../..")];
    assert!(check_links(links, cart, &plan).is_empty());
    let verdict = check(["src/home/x", "README.md"], cart).with_links(links, cart, &plan);
    assert_eq!(verdict.outside, ["src/home/x", "README.md"]);
    assert!(verdict.links.is_empty());
}

#[test]
fn the_violation_names_each_link_its_target_and_why_on_a_line_of_its_own() {
    let plan = plan();
    let cart = &plan.stories[0];
    let violation = check(["src/cart/passwd", "src/cart/sib"], cart)
        .with_links(
            [
                ("src/cart/passwd", "/etc/\npasswd"),
                ("src/cart/sib", "../home"),
            ],
            cart,
            &plan,
        )
        .into_violation("cart")
        .expect("violated");
    assert_eq!(
        violation.to_string(),
        "story `cart` changed paths outside its perimeter:\n\
         - src/cart/passwd -> /etc/\\npasswd (a symbolic link: its target is absolute, outside the \
         repository)\n\
         - src/cart/sib -> ../home (a symbolic link: its target lies in the owned paths of story \
         `home`)"
    );
}

proptest::proptest! {
    #[test]
    fn arbitrary_links_never_panic_and_an_escape_is_always_refused(
        links in proptest::collection::vec(("(src/cart/)?.{0,40}", "[./a-z\\\\]{0,40}|.{0,40}"), 0..8),
    ) {
        let plan = plan();
        let cart = &plan.stories[0];
        let found = check_links(links.iter().map(|(l, t)| (l, t)), cart, &plan);
        for (link, target) in &links {
            let owned = epic_perimeter::classify(link, cart) == epic_perimeter::Placement::Owned;
            let escapes = epic_story_plan::path::resolve_link(
                &epic_story_plan::path::normalize(link),
                target,
            )
            .is_err();
            if owned && escapes {
                proptest::prop_assert!(found.iter().any(|f| &f.link == link), "{link:?} -> {target:?}");
            }
        }
    }
}
