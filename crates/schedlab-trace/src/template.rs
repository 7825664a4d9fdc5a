//! Event body templates: one printf-like string per event, read by both the writer and the
//! parser, so the two cannot drift apart. The kernel events' templates are their
//! `print fmt:` strings from `/sys/kernel/tracing/events/sched/*/format` (v6.18).
//!
//! Conversions (a deliberately tiny subset of printf):
//!
//! | spec   | writes                    | parses                                        |
//! |--------|---------------------------|-----------------------------------------------|
//! | `%s`   | the string                | any text, possibly empty, spaces included     |
//! | `%t`   | the string                | one or more non-space characters (a token)    |
//! | `%d`   | signed decimal            | optional `-`, then one or more digits         |
//! | `%u`   | unsigned decimal          | one or more digits                            |
//! | `%03d` | decimal, zero-padded to 3 | one or more digits                            |
//!
//! `%s` is matched shortest-first with backtracking, so a comm containing spaces or even
//! `" pid="` still parses as long as the rest of the line matches the template.

use std::fmt::{self, Write};

/// A value handed to [`render`]; the template's conversion decides how it is printed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Str(&'a str),
    Int(i64),
    UInt(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv {
    Str,
    Tok,
    Int,
    UInt,
    Cpu3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'t> {
    Lit(&'t str),
    Field(Conv),
}

/// Splits a template into literal runs and conversions. Templates are crate constants, so an
/// unknown conversion is a programming error.
struct Pieces<'t> {
    rest: &'t str,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = Piece<'t>;

    fn next(&mut self) -> Option<Piece<'t>> {
        if self.rest.is_empty() {
            return None;
        }
        if let Some(after) = self.rest.strip_prefix('%') {
            let (conv, len) = if after.starts_with("03d") {
                (Conv::Cpu3, 3)
            } else {
                let conv = match after.as_bytes().first() {
                    Some(b's') => Conv::Str,
                    Some(b't') => Conv::Tok,
                    Some(b'd') => Conv::Int,
                    Some(b'u') => Conv::UInt,
                    _ => panic!("bad conversion in template {:?}", self.rest),
                };
                (conv, 1)
            };
            self.rest = &after[len..];
            return Some(Piece::Field(conv));
        }
        let end = self.rest.find('%').unwrap_or(self.rest.len());
        let (lit, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(Piece::Lit(lit))
    }
}

fn pieces(template: &str) -> Pieces<'_> {
    Pieces { rest: template }
}

/// Prints `args` into `out` following `template`; the args come in the template's order.
pub(crate) fn render<W: Write + ?Sized>(out: &mut W, template: &str, args: &[Arg]) -> fmt::Result {
    let mut args = args.iter();
    for piece in pieces(template) {
        match piece {
            Piece::Lit(lit) => out.write_str(lit)?,
            Piece::Field(conv) => {
                let arg = args.next().expect("template has more fields than args");
                match (conv, arg) {
                    (Conv::Cpu3, Arg::Int(v)) => write!(out, "{v:03}")?,
                    (Conv::Cpu3, Arg::UInt(v)) => write!(out, "{v:03}")?,
                    (_, Arg::Str(s)) => out.write_str(s)?,
                    (_, Arg::Int(v)) => write!(out, "{v}")?,
                    (_, Arg::UInt(v)) => write!(out, "{v}")?,
                }
            }
        }
    }
    debug_assert!(args.next().is_none(), "more args than template fields");
    Ok(())
}

/// Matches `body` against `template`; on success returns the text of each field in order.
pub(crate) fn match_body<'b>(template: &str, body: &'b str) -> Option<Vec<&'b str>> {
    let pieces: Vec<Piece> = pieces(template).collect();
    let mut caps = Vec::with_capacity(pieces.len());
    if match_from(&pieces, body, 0, &mut caps) {
        Some(caps)
    } else {
        None
    }
}

fn match_from<'b>(pieces: &[Piece], body: &'b str, pos: usize, caps: &mut Vec<&'b str>) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return pos == body.len();
    };
    let text = &body[pos..];
    match *first {
        Piece::Lit(lit) => text.starts_with(lit) && match_from(rest, body, pos + lit.len(), caps),
        Piece::Field(Conv::Str) => {
            if rest.is_empty() {
                caps.push(text);
                return true;
            }
            // Shortest first: try every char boundary where the remainder can match.
            for (off, _) in text
                .char_indices()
                .chain(std::iter::once((text.len(), ' ')))
            {
                caps.push(&text[..off]);
                if match_from(rest, body, pos + off, caps) {
                    return true;
                }
                caps.pop();
            }
            false
        }
        Piece::Field(conv) => {
            let len = match conv {
                Conv::Tok => text.find(char::is_whitespace).unwrap_or(text.len()),
                Conv::Int => {
                    let sign = usize::from(text.starts_with('-'));
                    let digits = digits_len(&text[sign..]);
                    if digits == 0 {
                        0
                    } else {
                        sign + digits
                    }
                }
                Conv::UInt | Conv::Cpu3 => digits_len(text),
                Conv::Str => unreachable!(),
            };
            if len == 0 {
                return false;
            }
            caps.push(&text[..len]);
            if match_from(rest, body, pos + len, caps) {
                return true;
            }
            caps.pop();
            false
        }
    }
}

fn digits_len(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAKE: &str = "comm=%s pid=%d prio=%d target_cpu=%03d";

    fn rendered(template: &str, args: &[Arg]) -> String {
        let mut s = String::new();
        render(&mut s, template, args).unwrap();
        s
    }

    #[test]
    fn render_pads_cpu_to_three_digits() {
        let s = rendered(
            WAKE,
            &[Arg::Str("cat"), Arg::Int(7), Arg::Int(120), Arg::UInt(1)],
        );
        assert_eq!(s, "comm=cat pid=7 prio=120 target_cpu=001");
        // %03d is a minimum width, as in printf: CPU 1234 prints all four digits.
        let s = rendered(
            WAKE,
            &[Arg::Str("cat"), Arg::Int(7), Arg::Int(120), Arg::UInt(1234)],
        );
        assert_eq!(s, "comm=cat pid=7 prio=120 target_cpu=1234");
    }

    #[test]
    fn match_splits_fields() {
        let caps = match_body(WAKE, "comm=cat pid=7 prio=120 target_cpu=001").unwrap();
        assert_eq!(caps, ["cat", "7", "120", "001"]);
    }

    #[test]
    fn match_string_with_spaces_and_key_lookalikes() {
        let caps = match_body(WAKE, "comm=a pid=5 b pid=-6 prio=99 target_cpu=010").unwrap();
        assert_eq!(caps, ["a pid=5 b", "-6", "99", "010"]);
        let caps = match_body(WAKE, "comm= pid=1 prio=2 target_cpu=3").unwrap();
        assert_eq!(caps, ["", "1", "2", "3"]);
    }

    #[test]
    fn match_rejects_wrong_shapes() {
        assert!(match_body(WAKE, "comm=cat pid=x prio=120 target_cpu=001").is_none());
        assert!(match_body(WAKE, "comm=cat pid=7 prio=120").is_none());
        assert!(match_body(WAKE, "comm=cat pid=7 prio=120 target_cpu=001 extra=1").is_none());
        assert!(match_body("a=%u", "a=-1").is_none());
        assert!(match_body("a=%t b", "a= b").is_none());
    }

    #[test]
    fn trailing_string_takes_the_rest() {
        let caps = match_body("pid=%d reason=%s", "pid=1 reason=two words").unwrap();
        assert_eq!(caps, ["1", "two words"]);
    }
}
