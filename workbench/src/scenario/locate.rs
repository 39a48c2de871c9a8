//! Finding the line a field is written on, so that a validation error can name it.
//!
//! `serde_yaml::Value` keeps no positions, and validation works on values, so this scans the
//! text itself: block mappings by indentation, block lists by their `- ` items. A value
//! written inline (`ci: {percentile: 99, width: 0us}`, `load: [1000, -5]`) is as deep as it
//! goes: its fields are reported at the line of the key that holds them. A field that is not
//! in the text (a default, or a missing one) is reported at its nearest enclosing field that
//! is, or at no line if none is.

use super::overrides::segments;

/// The 1-based line on which `field` (`ci.width`, `agents[1].kind`) is written in `text`.
pub(crate) fn line_of(text: &str, field: &str) -> Option<usize> {
    let lines: Vec<Line<'_>> = text
        .lines()
        .enumerate()
        .filter_map(|(i, raw)| Line::new(i + 1, raw))
        .collect();
    find(&lines, &segments(field))
}

/// The line where a key appears a second time in the same map, for YAML's duplicate-key
/// error, whose own position is the document's start.
pub(crate) fn duplicate_line(text: &str, key: &str) -> Option<usize> {
    // The keys seen in each open map, by the map's column.
    let mut seen: Vec<(usize, &str)> = Vec::new();
    for line in text
        .lines()
        .enumerate()
        .filter_map(|(i, raw)| Line::new(i + 1, raw))
    {
        let line = match line.is_item() {
            // A new list item opens a new map, one column further in.
            true => {
                seen.retain(|&(column, _)| column <= line.indent);
                let after_dash = line.content[1..].trim_start();
                Line {
                    indent: line.indent + line.content.len() - after_dash.len(),
                    content: after_dash,
                    ..line
                }
            }
            false => line,
        };
        seen.retain(|&(column, _)| column <= line.indent);
        if let Some((name, _)) = line.key() {
            if name == key && seen.contains(&(line.indent, name)) {
                return Some(line.number);
            }
            seen.push((line.indent, name));
        }
    }
    None
}

/// A line with content: its number, its indentation and its text without the comment.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    number: usize,
    indent: usize,
    content: &'a str,
}

impl<'a> Line<'a> {
    /// `None` for blank and comment-only lines and document markers, which hold no field.
    fn new(number: usize, raw: &'a str) -> Option<Line<'a>> {
        let content = strip_comment(raw.trim_start_matches(' ')).trim_end();
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        match content {
            "" | "---" | "..." => None,
            _ => Some(Line {
                number,
                indent,
                content,
            }),
        }
    }

    /// A block list item (`- x`, or `-` alone with the item below).
    fn is_item(&self) -> bool {
        self.content == "-" || self.content.starts_with("- ")
    }

    /// The key of a `key: value` or `key:` line, unquoted, and what follows the colon.
    fn key(&self) -> Option<(&'a str, &'a str)> {
        let content = self.content;
        let (key, rest) = match content.chars().next()? {
            quote @ ('"' | '\'') => {
                let end = content[1..].find(quote)? + 1;
                (&content[1..end], content[end + 1..].strip_prefix(':')?)
            }
            _ => {
                let colon = content
                    .find(": ")
                    .or_else(|| content.ends_with(':').then(|| content.len() - 1))?;
                (content[..colon].trim_end(), &content[colon + 1..])
            }
        };
        (rest.is_empty() || rest.starts_with(' ')).then_some((key, rest.trim()))
    }
}

/// The text before a `#` comment (one at the start or after a space, outside quotes).
fn strip_comment(text: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return &text[..i],
            None => {}
        }
        previous = c;
    }
    text
}

/// The line of the field at `path` within `lines`, a block whose first line sets its
/// column; the line of the deepest part found when the rest is not written out.
fn find(lines: &[Line<'_>], path: &[String]) -> Option<usize> {
    let (first, rest) = path.split_first()?;
    let column = lines.first()?.indent;
    // Only the block's own lines, not the deeper ones of its values.
    let own = |line: &&Line<'_>| line.indent == column;
    if let Ok(index) = first.parse::<usize>() {
        let (at, item) = lines
            .iter()
            .enumerate()
            .filter(|(_, line)| own(line) && line.is_item())
            .nth(index)?;
        if rest.is_empty() {
            return Some(item.number);
        }
        // The item's first line, seen from after its dash, then its deeper lines.
        let after_dash = item.content[1..].trim_start();
        let mut block = Vec::new();
        if !after_dash.is_empty() {
            block.push(Line {
                number: item.number,
                indent: column + item.content.len() - after_dash.len(),
                content: after_dash,
            });
        }
        block.extend(lines[at + 1..].iter().take_while(|l| l.indent > column));
        return find(&block, rest).or(Some(item.number));
    }
    let (at, line, inline) = lines.iter().enumerate().find_map(|(at, line)| {
        let (key, inline) = own(&line).then(|| line.key())??;
        (key == first).then_some((at, line, inline))
    })?;
    if rest.is_empty() || !inline.is_empty() {
        return Some(line.number);
    }
    // The value's block: deeper lines, or a list written at the key's own column.
    let block: Vec<Line<'_>> = lines[at + 1..]
        .iter()
        .take_while(|l| l.indent > column || (l.indent == column && l.is_item()))
        .copied()
        .collect();
    find(&block, rest).or(Some(line.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# A comment: with a colon
name: demo   # trailing: comment
ci:
  percentile: 99

  width: 0us
warmup: {window: 50ms, max: 1s}
load: [1000, -5]
agents:
- local
- address: 10.0.0.1:5001
  kind: latency
-
  ssh: host
targets:
  - a:1
  - 'b:2'
\"quoted key\": 1
url: http://x#y
";

    #[test]
    fn finds_block_fields_by_indentation() {
        assert_eq!(line_of(TEXT, "name"), Some(2));
        assert_eq!(line_of(TEXT, "ci"), Some(3));
        assert_eq!(line_of(TEXT, "ci.width"), Some(6));
        assert_eq!(line_of(TEXT, "quoted key"), Some(18));
        assert_eq!(line_of(TEXT, "url"), Some(19));
    }

    #[test]
    fn inline_values_are_located_at_their_key() {
        assert_eq!(line_of(TEXT, "warmup.max"), Some(7));
        assert_eq!(line_of(TEXT, "load[1]"), Some(8));
    }

    #[test]
    fn list_items_and_their_fields() {
        assert_eq!(line_of(TEXT, "agents[0]"), Some(10));
        assert_eq!(line_of(TEXT, "agents[1].address"), Some(11));
        assert_eq!(line_of(TEXT, "agents[1].kind"), Some(12));
        assert_eq!(line_of(TEXT, "agents[2].ssh"), Some(14));
        assert_eq!(line_of(TEXT, "targets[1]"), Some(17));
    }

    #[test]
    fn absent_fields_fall_back_to_the_nearest_enclosing_one() {
        assert_eq!(line_of(TEXT, "ci.confidence"), Some(3));
        assert_eq!(line_of(TEXT, "agents[7]"), Some(9));
        assert_eq!(line_of(TEXT, "agents[1].token_env"), Some(11));
        assert_eq!(line_of(TEXT, "percentile"), None);
        assert_eq!(line_of(TEXT, "limits.max_tries"), None);
        assert_eq!(line_of("", "name"), None);
    }

    #[test]
    fn finds_the_second_of_a_duplicate_key() {
        let text = "a: 1\nb:\n  a: 2\n  c: 3\nl:\n- c: 1\n  d: 1\n- c: 2\n  c: 4\na: 5\n";
        assert_eq!(duplicate_line(text, "a"), Some(10));
        assert_eq!(duplicate_line(text, "c"), Some(9));
        assert_eq!(duplicate_line(text, "b"), None);
    }
}
