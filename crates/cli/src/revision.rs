//! A merge revision in words (`merge_revision`): a story whose merge was red on the epic head,
//! undone, goes back to its coder (`--merge-revisions`). The live view's line.

use epic_events::Event;

/// The live view's line for a `merge_revision` event (empty for any other): its story, its
/// number of at most how many, and the stories whose work it meets.
pub(crate) fn line(event: &Event) -> String {
    let Event::MergeRevision {
        story,
        revision,
        of,
        met,
        ..
    } = event
    else {
        return String::new();
    };
    let meets = if met.is_empty() {
        String::new()
    } else {
        format!(", to meet {}", met.join(", "))
    };
    format!(
        "story {story}: merge red on the epic head, undone; back to its coder (merge revision \
         {revision} of {of}){meets}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_revision_names_its_number_and_the_stories_met() {
        let revision = |met: &[&str]| Event::MergeRevision {
            story: "b".into(),
            revision: 1,
            of: 2,
            head: "0123456789abcdef".into(),
            met: met.iter().map(|id| (*id).to_owned()).collect(),
            reason: "epic gates failed after merging; merge undone".into(),
        };
        assert_eq!(
            line(&revision(&["a"])),
            "story b: merge red on the epic head, undone; back to its coder (merge revision 1 \
             of 2), to meet a"
        );
        assert_eq!(
            line(&revision(&[])),
            "story b: merge red on the epic head, undone; back to its coder (merge revision 1 \
             of 2)"
        );
    }
}
