//! Output templates — golden snapshots with typed holes — and the matcher that checks a
//! program's printed output against one, line by line.
//!
//! A template is the program's output with every number replaced by a placeholder that
//! carries the printf conversion it came from, so that the literal text (labels, spacing,
//! punctuation, line order) is compared byte for byte and each number by its format only.
//! Templates are written by hand from the printf formats of workloads.md (§2.4, §3.3, §4.3,
//! §5.3) and the real programs' sources, never pasted from schedlab's own output.
//!
//! Syntax, line-oriented:
//!
//! * `;;` at the start of a line: a comment, dropped.
//! * `@repeat N` … `@end`: the enclosed lines N times; `N` is a number or `$name`, a binding
//!   given by the test. Inside, `{idx}` is the repetition index (0-based).
//! * `@if name` … [`@else` …] `@end`: the first branch when the binding `name` is present and
//!   not empty, else the second. Blocks nest.
//! * `\t` is a tab, `\\` a backslash, `{{` and `}}` literal braces.
//! * `{KIND[:WIDTH][=NAME]}` is a placeholder; `=NAME` records the matched value (without its
//!   padding) under NAME, in order of appearance.
//!
//! | KIND | printf | matches |
//! |---|---|---|
//! | `u` | `%u %lu %llu` | unsigned decimal, no superfluous leading zero |
//! | `i` | `%d %ld` | as `u`, with an optional `-` |
//! | `fP` | `%.Pf` | optional `-`, digits, `.`, exactly P digits |
//! | `pid` | `%d` of a pid | as `u`, and > 0 |
//! | `idx` | `%d` of a loop index | as `u`, and equal to the `@repeat` index |
//! | `word` | `%s` of a unit | one or more ASCII letters |
//! | `ulist` | `" %W…lu"` in a loop | zero or more of: a space, then the number as WIDTH says |
//! | `$name` | `%s` | the literal text bound to `name` |
//!
//! WIDTH is printf's: `W` right-aligns in at least W columns with spaces (`%9lu`), `-W`
//! left-aligns and pads with spaces (`%-10u`), `0W` pads with zeros (`%06lu`). A number wider
//! than W is printed whole, unpadded. After a number the next byte must not be a digit, so a
//! placeholder never stops in the middle of one.

use std::collections::BTreeMap;

/// The values recorded by `=NAME`, in the order they appeared in the output.
#[derive(Debug, Default, Clone)]
pub struct Captures {
    map: BTreeMap<String, Vec<String>>,
}

impl Captures {
    /// Every value recorded under `name`.
    pub fn all(&self, name: &str) -> &[String] {
        self.map.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The value recorded under `name`; panics unless there is exactly one.
    pub fn one(&self, name: &str) -> &str {
        match self.all(name) {
            [v] => v,
            other => panic!("capture '{name}': expected one value, got {other:?}"),
        }
    }

    pub fn u64(&self, name: &str) -> u64 {
        parse(name, self.one(name))
    }

    pub fn f64(&self, name: &str) -> f64 {
        parse(name, self.one(name))
    }

    pub fn u64s(&self, name: &str) -> Vec<u64> {
        self.all(name).iter().map(|v| parse(name, v)).collect()
    }

    pub fn f64s(&self, name: &str) -> Vec<f64> {
        self.all(name).iter().map(|v| parse(name, v)).collect()
    }
}

fn parse<T: std::str::FromStr>(name: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| panic!("capture '{name}': '{v}' does not parse"))
}

/// How a number is padded (printf flags and width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pad {
    /// `%Wx`: spaces on the left up to W columns (W = 0: none).
    Right(usize),
    /// `%-Wx`: spaces on the right.
    Left(usize),
    /// `%0Wx`: zeros after the sign.
    Zero(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Unsigned,
    Signed,
    Fixed(usize),
    Pid,
    Idx,
    Word,
    UList,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Lit(String),
    Hole {
        kind: Kind,
        pad: Pad,
        name: Option<String>,
        /// The placeholder as written, for messages.
        text: String,
    },
}

/// One template line after `@repeat`/`@if` expansion: its tokens and its repetition index.
#[derive(Debug, Clone)]
struct Line {
    /// 1-based line number in the template file.
    src: usize,
    text: String,
    idx: Option<u64>,
}

/// Checks `output` against `template`. `bindings` give `$name` values, `@repeat $name`
/// counts and `@if name` conditions. Returns the captures, or a message naming the first line
/// that differs and why.
pub fn check(template: &str, bindings: &[(&str, &str)], output: &str) -> Result<Captures, String> {
    let binds: BTreeMap<&str, &str> = bindings.iter().copied().collect();
    let src: Vec<(usize, &str)> = template
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.starts_with(";;"))
        .collect();
    let mut pos = 0;
    let lines = expand(&src, &mut pos, &binds, None, 0, true)?;
    if pos != src.len() {
        return Err(format!(
            "template line {}: unmatched @end/@else",
            src[pos].0
        ));
    }
    let Some(body) = output.strip_suffix('\n') else {
        return Err(format!(
            "output does not end with a newline: {:?}",
            output.lines().last()
        ));
    };
    let out: Vec<&str> = body.split('\n').collect();
    let mut caps = Captures::default();
    for (n, (t, o)) in lines.iter().zip(&out).enumerate() {
        match_line(t, o, &binds, &mut caps).map_err(|why| {
            format!(
                "output line {} (template line {}): {why}\n  template: {:?}\n  output:   {:?}",
                n + 1,
                t.src,
                t.text,
                o
            )
        })?;
    }
    if lines.len() != out.len() {
        let n = lines.len().min(out.len());
        return Err(format!(
            "the template has {} lines, the output {}; first unmatched: template {:?}, output {:?}",
            lines.len(),
            out.len(),
            lines.get(n).map(|l| &l.text),
            out.get(n)
        ));
    }
    Ok(caps)
}

/// Expands `@repeat` and `@if` blocks from `src[*pos..]` until the matching `@end`/`@else`
/// (depth > 0) or the end of the template. An inactive block (a branch not taken) is only
/// walked over: its bindings are not looked up and it yields no lines.
fn expand(
    src: &[(usize, &str)],
    pos: &mut usize,
    binds: &BTreeMap<&str, &str>,
    idx: Option<u64>,
    depth: usize,
    active: bool,
) -> Result<Vec<Line>, String> {
    let mut out = Vec::new();
    while let Some(&(n, text)) = src.get(*pos) {
        if text == "@end" || text == "@else" {
            if depth == 0 {
                return Err(format!("template line {n}: {text} without a block"));
            }
            return Ok(out);
        }
        *pos += 1;
        if let Some(count) = text.strip_prefix("@repeat ") {
            let count: u64 = if !active {
                0
            } else {
                let count = match count.strip_prefix('$') {
                    Some(name) => binds
                        .get(name)
                        .ok_or_else(|| format!("template line {n}: no binding '{name}'"))?,
                    None => count,
                };
                count
                    .trim()
                    .parse()
                    .map_err(|_| format!("template line {n}: bad repeat count '{count}'"))?
            };
            let start = *pos;
            // walk the body once inactive to find its end, then expand it `count` times
            expand(src, pos, binds, None, depth + 1, false)?;
            let end = *pos;
            for i in 0..count {
                *pos = start;
                out.extend(expand(src, pos, binds, Some(i), depth + 1, true)?);
            }
            *pos = end;
            expect_end(src, pos, n)?;
        } else if let Some(name) = text.strip_prefix("@if ") {
            let on = binds.get(name.trim()).is_some_and(|v| !v.is_empty());
            let yes = expand(src, pos, binds, idx, depth + 1, active && on)?;
            let mut no = Vec::new();
            if src.get(*pos).is_some_and(|(_, t)| *t == "@else") {
                *pos += 1;
                no = expand(src, pos, binds, idx, depth + 1, active && !on)?;
            }
            expect_end(src, pos, n)?;
            out.extend(if on { yes } else { no });
        } else if active {
            out.push(Line {
                src: n,
                text: text.to_string(),
                idx,
            });
        }
    }
    if depth > 0 {
        return Err("template: a block is not closed with @end".to_string());
    }
    Ok(out)
}

fn expect_end(src: &[(usize, &str)], pos: &mut usize, opened: usize) -> Result<(), String> {
    match src.get(*pos) {
        Some((_, "@end")) => {
            *pos += 1;
            Ok(())
        }
        _ => Err(format!(
            "template line {opened}: block not closed with @end"
        )),
    }
}

/// Splits a template line into literal text and placeholders.
fn tokenize(line: &str, binds: &BTreeMap<&str, &str>) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('t') => lit.push('\t'),
                Some('\\') => lit.push('\\'),
                other => return Err(format!("bad escape '\\{}'", other.unwrap_or(' '))),
            },
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                lit.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                lit.push('}');
            }
            '{' => {
                let mut spec = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => spec.push(c),
                        None => return Err(format!("unclosed placeholder '{{{spec}'")),
                    }
                }
                if let Some(name) = spec.strip_prefix('$') {
                    let v = binds
                        .get(name)
                        .ok_or_else(|| format!("no binding '{name}'"))?;
                    lit.push_str(v);
                    continue;
                }
                if !lit.is_empty() {
                    out.push(Token::Lit(std::mem::take(&mut lit)));
                }
                out.push(hole(&spec)?);
            }
            '}' => return Err("unpaired '}' (write '}}')".to_string()),
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        out.push(Token::Lit(lit));
    }
    Ok(out)
}

fn hole(spec: &str) -> Result<Token, String> {
    let text = format!("{{{spec}}}");
    let (body, name) = match spec.split_once('=') {
        Some((b, n)) if !n.is_empty() => (b, Some(n.to_string())),
        Some(_) => return Err(format!("empty capture name in {text}")),
        None => (spec, None),
    };
    let (kind, width) = match body.split_once(':') {
        Some((k, w)) => (k, Some(w)),
        None => (body, None),
    };
    let kind = match kind {
        "u" => Kind::Unsigned,
        "i" => Kind::Signed,
        "pid" => Kind::Pid,
        "idx" => Kind::Idx,
        "word" => Kind::Word,
        "ulist" => Kind::UList,
        k if k.starts_with('f') => Kind::Fixed(
            k[1..]
                .parse()
                .map_err(|_| format!("bad precision in {text}"))?,
        ),
        _ => return Err(format!("unknown placeholder kind in {text}")),
    };
    let pad = match width {
        None => Pad::Right(0),
        Some(w) => {
            let n = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| format!("bad width in {text}"))
            };
            if let Some(w) = w.strip_prefix('-') {
                Pad::Left(n(w)?)
            } else if w.len() > 1 && w.starts_with('0') {
                Pad::Zero(n(&w[1..])?)
            } else {
                Pad::Right(n(w)?)
            }
        }
    };
    if kind == Kind::Word && pad != Pad::Right(0) {
        return Err(format!("{text}: a word takes no width"));
    }
    Ok(Token::Hole {
        kind,
        pad,
        name,
        text,
    })
}

fn match_line(
    t: &Line,
    out: &str,
    binds: &BTreeMap<&str, &str>,
    caps: &mut Captures,
) -> Result<(), String> {
    let tokens = tokenize(&t.text, binds)?;
    let mut rest = out;
    for tok in &tokens {
        match tok {
            Token::Lit(l) => {
                rest = rest.strip_prefix(l.as_str()).ok_or_else(|| {
                    format!(
                        "expected {l:?} at column {}, found {rest:?}",
                        out.len() - rest.len() + 1
                    )
                })?;
            }
            Token::Hole {
                kind,
                pad,
                name,
                text,
            } => {
                let col = out.len() - rest.len() + 1;
                let at = |why: String| format!("{text} at column {col}: {why}");
                let values;
                (values, rest) = match kind {
                    Kind::Word => {
                        let n = rest.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
                        if n == 0 {
                            return Err(at(format!("expected a word, found {rest:?}")));
                        }
                        (vec![rest[..n].to_string()], &rest[n..])
                    }
                    Kind::UList => {
                        let mut vals = Vec::new();
                        let mut r = rest;
                        while let Some(after) = r.strip_prefix(' ') {
                            if !after.starts_with(|c: char| c.is_ascii_digit()) {
                                break;
                            }
                            let (v, next) = number(after, &Kind::Unsigned, *pad).map_err(&at)?;
                            vals.push(v);
                            r = next;
                        }
                        (vals, r)
                    }
                    _ => {
                        let (v, next) = number(rest, kind, *pad).map_err(&at)?;
                        match kind {
                            Kind::Pid if v == "0" => return Err(at("a pid must be > 0".into())),
                            Kind::Idx => {
                                let want =
                                    t.idx.ok_or_else(|| at("{idx} outside @repeat".into()))?;
                                if v != want.to_string() {
                                    return Err(at(format!("index {v}, expected {want}")));
                                }
                            }
                            _ => {}
                        }
                        (vec![v], next)
                    }
                };
                if let Some(n) = name {
                    caps.map.entry(n.clone()).or_default().extend(values);
                }
            }
        }
    }
    if !rest.is_empty() {
        return Err(format!("unexpected text at the end: {rest:?}"));
    }
    Ok(())
}

/// Reads one number printed with `pad` from the start of `s`; returns its value as printed
/// without padding (sign, digits, decimals) and the rest of `s`.
fn number<'a>(s: &'a str, kind: &Kind, pad: Pad) -> Result<(String, &'a str), String> {
    let b = s.as_bytes();
    let mut i = 0;
    let spaces = if matches!(pad, Pad::Right(_)) {
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        i
    } else {
        0
    };
    let signed = matches!(kind, Kind::Signed | Kind::Fixed(_));
    let neg = signed && b.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let digits = &s[digits_start..i];
    if digits.is_empty() {
        return Err(format!("expected a number, found {:?}", &s[spaces..]));
    }
    let mut decimals = "";
    if let Kind::Fixed(p) = kind {
        if b.get(i) != Some(&b'.') {
            return Err(format!("expected '.' and {p} decimals after {digits:?}"));
        }
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        decimals = &s[start..i];
        if decimals.len() != *p {
            return Err(format!(
                "{} decimals, expected {p}: {:?}",
                decimals.len(),
                &s[spaces..i]
            ));
        }
    }
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        return Err(format!("the number runs on: {:?}", &s[spaces..]));
    }
    // The value as printf would print it without padding.
    let int = if matches!(pad, Pad::Zero(_)) {
        let t = digits.trim_start_matches('0');
        if t.is_empty() {
            "0"
        } else {
            t
        }
    } else {
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(format!("superfluous leading zero in {digits:?}"));
        }
        digits
    };
    let mut value = String::new();
    if neg {
        value.push('-');
    }
    value.push_str(int);
    if let Kind::Fixed(_) = kind {
        value.push('.');
        value.push_str(decimals);
    }
    let printed = match pad {
        Pad::Right(w) => format!("{value:>w$}"),
        Pad::Left(w) => format!("{value:<w$}"),
        Pad::Zero(w) => {
            let body = if neg { &value[1..] } else { &value[..] };
            let w = w.saturating_sub(neg as usize);
            format!("{}{body:0>w$}", if neg { "-" } else { "" })
        }
    };
    let consumed = &s[..i];
    if let Pad::Left(_) = pad {
        // the padding spaces follow the number
        let want = printed.len() - value.len();
        let have = s[i..].bytes().take_while(|&c| c == b' ').count();
        if have < want {
            return Err(format!(
                "{value:?} left-aligned needs {want} spaces after it, found {have}"
            ));
        }
        return Ok((value, &s[i + want..]));
    }
    if consumed != printed {
        return Err(format!(
            "printed as {consumed:?}, the format gives {printed:?}"
        ));
    }
    Ok((value, &s[i..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &str, out: &str) -> Captures {
        check(t, &[], out).unwrap_or_else(|e| panic!("{e}"))
    }

    fn bad(t: &str, out: &str) -> String {
        check(t, &[], out).expect_err(out)
    }

    #[test]
    fn widths_and_alignment() {
        // %9lu: 7 digits get 2 spaces; 10 digits overflow the width unpadded.
        ok("[{u:9}]\n", "[  4096000]\n");
        ok("[{u:9}]\n", "[1234567890]\n");
        assert!(bad("[{u:9}]\n", "[ 4096000]\n").contains("the format gives"));
        assert!(bad("[{u:9}]\n", "[   4096000]\n").contains("the format gives"));
        // %-10u then " (": exactly 10 - 3 spaces after 100.
        ok("{u:-10} (x)\n", "100        (x)\n");
        let e = bad("{u:-10} (x)\n", "100       (x)\n");
        assert!(e.contains("expected \" (x)\""), "{e}");
        // %06lu and %09llu.
        ok("{u:06} {u:09}\n", "000042 000022687\n");
        assert!(bad("{u:06}\n", "42\n").contains("the format gives \"000042\""));
        assert!(bad("{u:06}\n", "0000042\n").contains("the format gives \"000042\""));
        // %05lu of a wider number prints it whole.
        ok("{u:05}\n", "123456\n");
        // %9.2f
        let c = ok("{f2:9=x} {f2:12=y}\n", "    20.02    204595.40\n");
        assert_eq!((c.f64("x"), c.f64("y")), (20.02, 204595.4));
        assert!(bad("{f2:9}\n", "    20.0\n").contains("decimals"));
        assert!(bad("{f2:9}\n", "   20.020\n").contains("decimals"));
        // signed: %5ld of -3
        ok("{i:5}|{i}\n", "   -3|-12\n");
        assert!(bad("{u}\n", "-3\n").contains("expected a number"));
    }

    #[test]
    fn numbers_are_whole() {
        assert!(bad("{u}x\n", "007x\n").contains("leading zero"));
        assert!(bad("{u}\n", "12.5\n").contains("unexpected text"));
        assert!(bad("{u}{u}\n", "12\n").contains("expected a number"));
        assert!(bad("{pid}\n", "0\n").contains("pid"));
        ok("{u}.{u:03}\n", "0.266\n");
        assert!(bad("{u}.{u:03}\n", "0.26\n").contains("the format gives"));
    }

    #[test]
    fn literals_blocks_and_captures() {
        let t = ";; comment\n\\t* {f1:2=p}th: x\n@repeat $n\n{idx:06} {u:06=c}\n@end\n@if q\nQ\n@else\nNQ {$mode}\n@end\nend {{x}}\n";
        let out = "\t* 99.0th: x\n000000 000003\n000001 000004\nNQ threaded\nend {x}\n";
        let c = check(t, &[("n", "2"), ("mode", "threaded")], out).unwrap();
        assert_eq!(c.u64s("c"), vec![3, 4]);
        assert_eq!(c.f64("p"), 99.0);
        // wrong index
        let e = check(
            t,
            &[("n", "2"), ("mode", "threaded")],
            &out.replace("000001 ", "000002 "),
        )
        .unwrap_err();
        assert!(e.contains("index 2, expected 1"), "{e}");
        // @if taken; zero repetitions
        let c = check(t, &[("n", "0"), ("q", "1")], "\t* 99.0th: x\nQ\nend {x}\n").unwrap();
        assert!(c.all("c").is_empty());
        // line counts must agree
        assert!(check("a\n", &[], "a\nb\n")
            .unwrap_err()
            .contains("1 lines, the output 2"));
        assert!(check("a\nb\n", &[], "a\n")
            .unwrap_err()
            .contains("2 lines, the output 1"));
        assert!(check("a\n", &[], "a").unwrap_err().contains("newline"));
        // blank lines are compared too
        ok("a\n\nb\n", "a\n\nb\n");
        assert!(bad("a\n\nb\n", "a\n \nb\n").contains("unexpected text"));
    }

    #[test]
    fn lists_and_words() {
        let c = ok(
            "# T 0:{ulist:05=o} # {u:05} others\n",
            "# T 0: 00004 00005 # 00010 others\n",
        );
        assert_eq!(c.u64s("o"), vec![4, 5]);
        let c = ok("# T 0:{ulist:05=o}\n", "# T 0:\n");
        assert!(c.all("o").is_empty());
        let c = ok("{f2}{word=u}/s\n", "1.95MB/s\n");
        assert_eq!(c.one("u"), "MB");
    }
}
