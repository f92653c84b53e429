//! The price table: defaults for the presets, first matching prefix wins, overrides.

use epic_report::{Price, PriceTable, Usage};

/// A known price, as `price_of` returns it.
#[expect(
    clippy::unnecessary_wraps,
    reason = "compared with `price_of`, which returns an Option"
)]
fn price(input: f64, output: f64) -> Option<Price> {
    Some(Price::new(input, output).expect("a valid price"))
}

#[test]
fn defaults_for_the_presets() {
    let prices = PriceTable::default();
    assert_eq!(prices.price_of("claude"), price(3.0, 15.0));
    assert_eq!(prices.price_of("codex"), price(5.0, 30.0));
    assert_eq!(prices.price_of("gemini"), price(1.25, 10.0));
    assert_eq!(prices.price_of("script"), Some(Price::FREE));
    for unknown in [
        "aider",
        "opencode",
        "exec:claude -p",
        "exec:./agent.sh",
        "llama",
        "",
    ] {
        assert_eq!(prices.price_of(unknown), None, "{unknown}");
    }
}

#[test]
fn model_names_are_priced_by_their_family_or_not_at_all() {
    let prices = PriceTable::default();
    assert_eq!(prices.price_of("claude-sonnet-4-5"), price(3.0, 15.0));
    assert_eq!(prices.price_of("claude-opus-4-1"), price(15.0, 75.0));
    assert_eq!(prices.price_of("claude-haiku-4"), price(1.0, 5.0));
    assert_eq!(prices.price_of("gemini-2.5-flash"), price(0.3, 2.5));
    assert_eq!(prices.price_of("gpt-5.5"), price(5.0, 30.0));
    assert_eq!(prices.price_of("grok-4.20"), price(1.25, 2.5));
    // Not the preset's price: a model the table does not know has none.
    for unknown in [
        "claude-opus-9",
        "gemini-3-pro",
        "gpt-6",
        "codex-mini",
        "grok-5",
    ] {
        assert_eq!(prices.price_of(unknown), None, "{unknown}");
    }
}

#[test]
fn first_matching_prefix_wins() {
    let prices = PriceTable::empty()
        .with("exec:cheap", Price::new(1.0, 1.0).unwrap())
        .with("exec:", Price::new(9.0, 9.0).unwrap())
        .with("exec:cheap-but-later", Price::new(5.0, 5.0).unwrap());
    assert_eq!(prices.price_of("exec:cheap-but-later"), price(1.0, 1.0));
    assert_eq!(prices.price_of("exec:other"), price(9.0, 9.0));
    assert_eq!(prices.rate_of("exec:other").unwrap().prefix, "exec:");
    assert_eq!(PriceTable::empty().price_of("claude"), None);
}

#[test]
fn overrides_come_first_and_replace_their_prefix() {
    let ours = PriceTable::empty()
        .with("claude", Price::new(15.0, 75.0).unwrap())
        .with("exec:./agent.sh", Price::new(0.5, 1.5).unwrap())
        .with_unknown("gemini");
    let prices = PriceTable::default().merge(ours);
    assert_eq!(prices.price_of("claude"), price(15.0, 75.0));
    assert_eq!(prices.price_of("exec:./agent.sh --fast"), price(0.5, 1.5));
    assert_eq!(prices.price_of("gemini"), None);
    assert_eq!(prices.price_of("codex"), price(5.0, 30.0), "defaults stay");
    assert_eq!(
        prices
            .rates()
            .iter()
            .filter(|rate| rate.prefix == "claude")
            .count(),
        1
    );
    assert_eq!(prices.rates()[0].prefix, "claude");
}

#[test]
fn a_cost_is_prompt_at_input_price_plus_reply_at_output_price() {
    let prices = PriceTable::default();
    let usage = Usage {
        prompt: 2_000_000,
        completion: 1_000_000,
        total: 3_000_000,
    };
    assert_eq!(prices.cost_of("gemini", &usage), Some(12.5));
    assert_eq!(prices.cost_of("aider", &usage), None);
    let max = Usage {
        prompt: u64::MAX,
        completion: u64::MAX,
        total: u64::MAX,
    };
    assert!(prices.cost_of("claude", &max).unwrap().is_finite());
}

#[test]
fn prices_must_be_finite_and_non_negative() {
    for (input, output) in [(-0.01, 1.0), (1.0, f64::NAN), (f64::INFINITY, 1.0)] {
        let err = Price::new(input, output).unwrap_err();
        assert!(err.to_string().contains("finite, non-negative"), "{err}");
    }
    let free = Price::new(0.0, 0.0).unwrap();
    assert_eq!(
        (free.input_per_million(), free.output_per_million()),
        (0.0, 0.0)
    );
}
