//! The report's Markdown as HTML: the subset [`render_markdown`](crate::render_markdown) writes
//! (headings, paragraphs, quotes, lists, tables, fenced blocks, inline code), every piece of
//! text escaped. The Mermaid timeline is left out: the page draws its own.

use std::fmt::Write as _;

use crate::pictures::escape;

/// The HTML of `markdown`, as `render_markdown` writes it.
pub(crate) fn to_html(markdown: &str) -> String {
    let mut out = String::new();
    let mut lines = markdown.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(language) = line.strip_prefix("```") {
            let mut body = Vec::new();
            for inner in lines.by_ref() {
                if inner.starts_with("```") {
                    break;
                }
                body.push(inner);
            }
            if language.trim() != "mermaid" {
                out.push_str("<pre><code>");
                out.push_str(&escape(&body.join("\n")));
                out.push_str("</code></pre>\n");
            }
        } else if let Some((level, text)) = heading(line) {
            // The page's own title is the h1: the report's headings go one level down.
            let _ = writeln!(out, "<h{0}>{1}</h{0}>", level + 1, inline(text));
        } else if line.starts_with('>') {
            let mut text = vec![quoted(line)];
            while let Some(next) = lines.next_if(|next| next.starts_with('>')) {
                text.push(quoted(next));
            }
            let _ = writeln!(
                out,
                "<blockquote><p>{}</p></blockquote>",
                inline(&text.join(" "))
            );
        } else if let Some(item) = list_item(line) {
            out.push_str("<ul>\n");
            let _ = writeln!(out, "<li>{}</li>", inline(item));
            while let Some(item) = lines.peek().and_then(|next| list_item(next)) {
                let _ = writeln!(out, "<li>{}</li>", inline(item));
                lines.next();
            }
            out.push_str("</ul>\n");
        } else if line.starts_with('|') {
            let mut rows = vec![cells(line)];
            while let Some(next) = lines.next_if(|next| next.starts_with('|')) {
                rows.push(cells(next));
            }
            table(&rows, &mut out);
        } else if !line.trim().is_empty() {
            let mut text = vec![line.trim()];
            while let Some(next) = lines.next_if(|next| is_plain(next)) {
                text.push(next.trim());
            }
            let _ = writeln!(out, "<p>{}</p>", inline(&text.join(" ")));
        }
    }
    out
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    let text = line.get(level..)?.strip_prefix(' ')?;
    (1..=5).contains(&level).then_some((level, text))
}

fn quoted(line: &str) -> &str {
    let text = line.trim_start_matches('>');
    text.strip_prefix(' ').unwrap_or(text)
}

fn list_item(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("- ")
}

fn is_plain(line: &str) -> bool {
    !line.trim().is_empty()
        && !line.starts_with(['#', '>', '|'])
        && !line.starts_with("```")
        && list_item(line).is_none()
}

/// The cells of a table row: split on `|` but an escaped `\|`, which stands for a `|`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                if let Some(cell) = cells.last_mut() {
                    cell.push('|');
                }
            }
            '|' => cells.push(String::new()),
            c => {
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells
        .into_iter()
        .map(|cell| cell.trim().to_owned())
        .collect()
}

fn table(rows: &[Vec<String>], out: &mut String) {
    let separator = |row: &Vec<String>| {
        row.iter()
            .all(|cell| !cell.is_empty() && cell.chars().all(|c| matches!(c, '-' | ':')))
    };
    let (head, body) = match rows {
        [head, sep, body @ ..] if separator(sep) => (Some(head), body),
        body => (None, body),
    };
    out.push_str("<div class=\"table\"><table>\n");
    if let Some(head) = head {
        out.push_str("<thead><tr>");
        for cell in head {
            let _ = write!(out, "<th>{}</th>", inline(cell));
        }
        out.push_str("</tr></thead>\n");
    }
    out.push_str("<tbody>\n");
    for row in body {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", inline(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// Inline text: code spans (a run of backticks to the next run as long) as `<code>`, the rest
/// escaped as it stands.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let fence = rest[open..].chars().take_while(|c| *c == '`').count();
        let after = &rest[open + fence..];
        let Some(close) = find_fence(after, fence) else {
            break;
        };
        out.push_str(&escape(&rest[..open]));
        let code = &after[..close];
        let code = match code
            .strip_prefix(' ')
            .and_then(|code| code.strip_suffix(' '))
        {
            Some(inner) if !inner.is_empty() => inner,
            _ => code,
        };
        out.push_str("<code>");
        out.push_str(&escape(code));
        out.push_str("</code>");
        rest = &after[close + fence..];
    }
    out.push_str(&escape(rest));
    out
}

/// Where in `text` a run of exactly `fence` backticks starts.
fn find_fence(text: &str, fence: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == fence {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_split_on_unescaped_pipes() {
        let html = to_html("| A | B |\n| --- | --- |\n| `x\\|y` | a \\| b <i> |\n");
        assert!(html.contains("<th>A</th><th>B</th>"), "{html}");
        assert!(
            html.contains("<td><code>x|y</code></td><td>a | b &lt;i&gt;</td>"),
            "{html}"
        );
    }

    #[test]
    fn code_spans_take_longer_fences() {
        assert_eq!(
            inline("``a`b`` and `c`"),
            "<code>a`b</code> and <code>c</code>"
        );
        assert_eq!(inline("lone ` tick"), "lone ` tick");
    }

    #[test]
    fn blocks() {
        let html =
            to_html("# T\n\n> a\n> b\n\n- one\n  - two\n\ntext\nmore\n\n```mermaid\ngantt\n```\n");
        assert_eq!(
            html,
            "<h2>T</h2>\n<blockquote><p>a b</p></blockquote>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<p>text more</p>\n"
        );
    }
}
