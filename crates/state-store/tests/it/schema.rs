//! The JSON Schema of the story state document.

use serde_json::json;

#[test]
fn state_schema_describes_the_envelope_and_the_story_state() {
    let schema = epic_state_store::state_schema();
    assert_eq!(schema["title"], "story state document");
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["version", "data"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["version"]["const"], 1);

    let reference = schema["properties"]["data"]["$ref"]
        .as_str()
        .expect("data refers to the StoryState definition");
    let name = reference.rsplit('/').next().unwrap();
    let state = &schema["$defs"][name];
    assert_eq!(
        state["required"],
        json!(["id", "hash", "branch", "worktree", "status"])
    );
    let status = &state["properties"]["status"];
    let status = match status.get("$ref").and_then(|reference| reference.as_str()) {
        Some(reference) => &schema["$defs"][reference.rsplit('/').next().unwrap()],
        None => status,
    };
    let values: Vec<&str> = status["oneOf"]
        .as_array()
        .map(|variants| {
            variants
                .iter()
                .map(|variant| variant["const"].as_str().unwrap())
                .collect()
        })
        .or_else(|| {
            status["enum"]
                .as_array()
                .map(|values| values.iter().map(|value| value.as_str().unwrap()).collect())
        })
        .expect("status lists its values");
    assert_eq!(values, ["started", "merged", "failed"]);
}
