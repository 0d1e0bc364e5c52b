//! Text from the cases, made safe for report files: terminal escapes removed, characters that
//! XML (and so JUnit) cannot carry made visible, lengths bounded to a byte budget, markup
//! characters escaped, and which links may be made links. Every report uses these; none of
//! them knows a report.

/// `1 run`, `2 runs`: a count and its noun, singular for one.
pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `text` without ANSI escape sequences, with C0/C1 control characters (but tab, newline and
/// carriage return) shown as their Unicode control pictures (`␀`, `␛`) or U+FFFD, and the
/// non-characters U+FFFE and U+FFFF (which XML forbids) as U+FFFD.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.peek() {
                // CSI: ESC [ parameters, intermediates, one final byte.
                Some('[') => {
                    chars.next();
                    while chars.next_if(|c| ('\x20'..='\x3f').contains(c)).is_some() {}
                    chars.next_if(|c| ('\x40'..='\x7e').contains(c));
                }
                // OSC: ESC ] … terminated by BEL or ESC \.
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                // Two-character escapes: ESC c, ESC (B …
                Some(&n) if ('\x20'..='\x7e').contains(&n) => {
                    chars.next();
                    if ('\x20'..='\x2f').contains(&n) {
                        chars.next_if(|c| ('\x30'..='\x7e').contains(c));
                    }
                }
                _ => out.push('\u{241b}'),
            },
            '\t' | '\n' | '\r' => out.push(c),
            '\x00'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\x7f' => out.push('\u{2421}'),
            '\u{80}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
    }
    out
}

/// [`clean`]ed, on one line: line breaks and tabs as spaces. For a field that a report shows on
/// one line (a name, a label, a summary), whatever a case or a JSON file put in it.
pub fn one_line(text: &str) -> String {
    clean(text).replace(['\n', '\r', '\t'], " ")
}

/// Plain text anywhere in Markdown (a table cell, a list item, a heading, a link's text):
/// [`one_line`], then every ASCII punctuation character but `.`, `-`, `,`, `=` and `:`
/// backslash-escaped, so that `|` cannot split a table row, `<` open HTML, a backtick open code,
/// `[` a link, and no line break end the block it is in.
pub fn markdown(text: &str) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c.is_ascii_punctuation() && !matches!(c, '.' | '-' | ',' | '=' | ':') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// [`one_line`], HTML-escaped: for an HTML element on one line, such as the `<summary>` of a
/// Markdown fold (a line break there could end the HTML block, and what follows would be
/// Markdown).
pub fn html_line(text: &str) -> String {
    escape(&one_line(text))
}

/// A URL as a Markdown link target: every byte but ASCII letters, digits and
/// `-._~:/?#@!$&'*+,;=%` percent-encoded (`|`, spaces, `<`, `>`, parentheses, backticks,
/// backslashes, control and non-ASCII characters), so that it can end neither the link nor the
/// table cell it is in.
pub fn link_target(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for b in url.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:/?#@!$&'*+,;=%".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `&`, `<`, `>`, `"` and `'` as character references, for HTML and XML alike.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Only http(s) links are made links; anything else stays text.
pub fn is_web_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Bytes `c` takes once escaped for XML or HTML (the worst of the two).
fn escaped_len(c: char) -> usize {
    match c {
        '<' | '>' => 4,
        '&' => 5,
        '"' | '\'' => 6,
        _ => c.len_utf8(),
    }
}

/// Bytes `text` takes once escaped.
pub fn escaped_size(text: &str) -> usize {
    text.chars().map(escaped_len).sum()
}

/// The end of `text` that fits in `budget` escaped bytes, after a line saying how much was
/// left out. The end is what matters in output and tracebacks: the error is there.
pub fn tail(text: &str, budget: usize) -> String {
    if escaped_size(text) <= budget {
        return text.to_string();
    }
    let mut used = 0;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        used += escaped_len(c);
        if used > budget {
            break;
        }
        start = i;
    }
    format!("[… {} bytes left out …]\n{}", start, &text[start..])
}

/// The smallest char boundary at or after `i`.
fn boundary_up(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// The largest char boundary at or before `i`.
fn boundary_down(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// [`clean`]ed, then [`head`]: only the part that can show is cleaned, however long `text` is.
pub fn clean_head(text: &str, budget: usize) -> String {
    let end = boundary_down(text, budget);
    let shown = head(&clean(&text[..end]), budget);
    let beyond = text.len() - end;
    if beyond == 0 {
        return shown;
    }
    // Count what was left out before cleaning too.
    match shown
        .rsplit_once("… [")
        .and_then(|(h, r)| Some((h, r.strip_suffix(" bytes left out]")?)))
    {
        Some((h, n)) => format!(
            "{h}… [{} bytes left out]",
            beyond + n.parse::<usize>().unwrap_or(0)
        ),
        None => format!("{shown}… [{beyond} bytes left out]"),
    }
}

/// [`clean`]ed, then [`tail`]: only the part that can show is cleaned, however long `text` is.
pub fn clean_tail(text: &str, budget: usize) -> String {
    let start = boundary_up(text, text.len().saturating_sub(budget));
    let cleaned = clean(&text[start..]);
    let shown = tail(&cleaned, budget);
    if start == 0 {
        return shown;
    }
    // Count what was left out before cleaning too.
    match shown
        .strip_prefix("[… ")
        .and_then(|r| r.split_once(" bytes left out …]\n"))
    {
        Some((n, rest)) => format!(
            "[… {} bytes left out …]\n{rest}",
            start + n.parse::<usize>().unwrap_or(0)
        ),
        None => format!("[… {start} bytes left out …]\n{shown}"),
    }
}

/// Both ends of `text`, cleaned, within `budget`: for a traceback, whose head shows where it
/// started and whose tail shows the exception.
pub fn clean_ends(text: &str, budget: usize) -> String {
    if text.len() <= budget {
        let cleaned = clean(text);
        if escaped_size(&cleaned) <= budget {
            return cleaned;
        }
    }
    let half = budget / 2;
    let split = boundary_down(text, half);
    let head = head(&clean(&text[..split]), half);
    let head = head
        .rsplit_once("… [")
        .map(|(h, _)| h.to_string())
        .unwrap_or(head);
    format!("{head}\n{}", clean_tail(&text[split..], half))
}

/// The start of `text` that fits in `budget` escaped bytes, with `…` when it was cut.
pub fn head(text: &str, budget: usize) -> String {
    if escaped_size(text) <= budget {
        return text.to_string();
    }
    let mut used = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        used += escaped_len(c);
        if used > budget {
            break;
        }
        end = i + c.len_utf8();
    }
    format!("{}… [{} bytes left out]", &text[..end], text.len() - end)
}

/// A shrinking allowance of bytes for a whole report file, so that its size stays bounded
/// however many runs fail and however much they print: each run gets up to `per_run` bytes
/// while the total lasts, then `min_per_run`.
#[derive(Debug, Clone)]
pub struct Budget {
    left: usize,
    per_run: usize,
    min_per_run: usize,
}

impl Budget {
    pub fn new(total: usize, per_run: usize, min_per_run: usize) -> Self {
        Budget {
            left: total,
            per_run,
            min_per_run,
        }
    }

    /// How many bytes the next run may use.
    pub fn allowance(&self) -> usize {
        self.per_run.min(self.left).max(self.min_per_run)
    }

    /// Count `bytes` as used.
    pub fn spend(&mut self, bytes: usize) {
        self.left = self.left.saturating_sub(bytes);
    }

    /// True once the total is used up.
    pub fn exhausted(&self) -> bool {
        self.left <= self.min_per_run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_escapes_and_forbidden_characters() {
        let dirty =
            "a\x1b[1;31mred\x1b[0m b\x00c\u{fffe}d\u{ffff}e\x1b]0;title\x07f\x7fg\u{9b}h\tlast\n";
        assert_eq!(
            clean(dirty),
            "ared b\u{2400}c\u{fffd}d\u{fffd}ef\u{2421}g\u{fffd}h\tlast\n"
        );
        assert_eq!(clean("lone \x1b"), "lone \u{241b}");
        assert_eq!(clean("]]> <b>&"), "]]> <b>&");
    }

    #[test]
    fn tails_and_heads_fit_the_budget() {
        let text = "line one\nline two\nthe error at the end";
        assert_eq!(tail(text, 1000), text);
        let t = tail(text, 20);
        assert!(t.ends_with("the error at the end"), "{t}");
        assert!(t.starts_with("[… 18 bytes left out …]"), "{t}");
        let h = head("<<<<<<<<", 8);
        assert_eq!(h, "<<… [6 bytes left out]");
        let both = clean_ends(
            "Traceback (most recent call last):\n  frames\nValueError: boom",
            40,
        );
        assert!(
            both.starts_with("Traceback") && both.ends_with("ValueError: boom"),
            "{both}"
        );
        let multi = "ééééé";
        assert!(tail(multi, 3).ends_with('é'));
    }

    #[test]
    fn cleaning_only_what_shows() {
        let long = format!("{}\x1b[1mend\x00", "a".repeat(10_000));
        assert_eq!(
            clean_tail(&long, 8),
            "[… 10000 bytes left out …]\nend\u{2400}"
        );
        assert_eq!(clean_head(&long, 4), "aaaa… [10004 bytes left out]");
        let both = clean_ends(&long, 12);
        assert!(
            both.starts_with("aaaaaa\n[… ") && both.ends_with("end\u{2400}"),
            "{both}"
        );
        assert_eq!(clean_tail("short\x00", 100), "short\u{2400}");
        assert_eq!(
            clean_head("é".repeat(10).as_str(), 5),
            "éé… [16 bytes left out]"
        );
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<script>\"'&"), "&lt;script&gt;&quot;&#39;&amp;");
    }

    #[test]
    fn web_links_only() {
        assert!(is_web_link("https://bugs.python.org/issue39492"));
        assert!(!is_web_link("javascript:alert(1)"));
        assert!(!is_web_link("https://x y"));
    }

    #[test]
    fn budget_shrinks_to_its_minimum() {
        let mut b = Budget::new(100, 60, 10);
        assert_eq!(b.allowance(), 60);
        b.spend(60);
        assert_eq!(b.allowance(), 40);
        b.spend(60);
        assert_eq!(b.allowance(), 10);
        assert!(b.exhausted());
    }
}

#[cfg(test)]
mod neutral_text_tests {
    use super::*;

    #[test]
    fn hostile_text_stays_text() {
        assert_eq!(one_line("a\n\nb\x1b]52;c;x\x07c\td"), "a  bc d");
        assert_eq!(
            markdown("x|y\n\n# h `z` <b>"),
            "x\\|y  \\# h \\`z\\` \\<b\\>"
        );
        assert_eq!(
            html_line("<x>\n\n## not a heading"),
            "&lt;x&gt;  ## not a heading"
        );
        assert_eq!(
            link_target("https://e.x/a|b c(d)<e>`\u{e9}"),
            "https://e.x/a%7Cb%20c%28d%29%3Ce%3E%60%C3%A9"
        );
    }
}
