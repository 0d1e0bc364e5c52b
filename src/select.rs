//! Selecting cases as pytest does: `-k` expressions (`pickler and not gc`, `(a or b) and c`)
//! matched case-insensitively as substrings of a run's name, file path and tags; `--tag`.

use crate::case::{Case, Params};
use crate::errors::Error;

#[derive(Debug, Clone, PartialEq)]
pub enum Keyword {
    Word(String),
    Not(Box<Keyword>),
    And(Box<Keyword>, Box<Keyword>),
    Or(Box<Keyword>, Box<Keyword>),
}

impl Keyword {
    pub fn parse(expr: &str) -> Result<Keyword, Error> {
        let tokens = tokenize(expr);
        let mut p = Parser {
            tokens: &tokens,
            pos: 0,
        };
        let bad = |reason: &str| Error::Keyword {
            expr: expr.to_string(),
            reason: reason.to_string(),
        };
        if tokens.is_empty() {
            return Err(bad("empty expression"));
        }
        let k = p.or().map_err(|r| bad(&r))?;
        if p.pos != tokens.len() {
            return Err(bad(&format!("unexpected `{}`", tokens[p.pos])));
        }
        Ok(k)
    }

    pub fn matches(&self, haystack: &str) -> bool {
        match self {
            Keyword::Word(w) => haystack.contains(w.as_str()),
            Keyword::Not(k) => !k.matches(haystack),
            Keyword::And(a, b) => a.matches(haystack) && b.matches(haystack),
            Keyword::Or(a, b) => a.matches(haystack) || b.matches(haystack),
        }
    }

    /// Whether a case with `params` is selected: the expression is tried against its name
    /// with params, its file path and its tags.
    pub fn selects(&self, case: &Case, params: &Params) -> bool {
        let haystack = format!(
            "{} {} {}",
            case.display_name(params),
            case.path.display(),
            case.tags.join(" ")
        )
        .to_lowercase();
        self.matches(&haystack)
    }
}

fn tokenize(expr: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in expr.chars() {
        if c == '(' || c == ')' || c.is_whitespace() {
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                tokens.push(c.to_string());
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

struct Parser<'a> {
    tokens: &'a [String],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn or(&mut self) -> Result<Keyword, String> {
        let mut left = self.and()?;
        while self.peek() == Some("or") {
            self.pos += 1;
            left = Keyword::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Keyword, String> {
        let mut left = self.not()?;
        while self.peek() == Some("and") {
            self.pos += 1;
            left = Keyword::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Keyword, String> {
        if self.peek() == Some("not") {
            self.pos += 1;
            return Ok(Keyword::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Keyword, String> {
        match self.peek() {
            None => Err("expression ends too early".into()),
            Some("(") => {
                self.pos += 1;
                let k = self.or()?;
                if self.peek() != Some(")") {
                    return Err("missing `)`".into());
                }
                self.pos += 1;
                Ok(k)
            }
            Some(t @ (")" | "and" | "or")) => Err(format!("unexpected `{t}`")),
            Some(word) => {
                let w = word.to_lowercase();
                self.pos += 1;
                Ok(Keyword::Word(w))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        let k = Keyword::parse("pickler=c and not (gc or cycle)").unwrap();
        assert!(k.matches("dispatch-table[pickler=c]"));
        assert!(!k.matches("reducer-override-cycle[pickler=c]"));
        assert!(!k.matches("dispatch-table[pickler=python]"));
        assert!(Keyword::parse("a or").is_err());
        assert!(Keyword::parse("(a").is_err());
        assert!(Keyword::parse("a b").is_err());
        assert!(Keyword::parse("").is_err());
    }
}
