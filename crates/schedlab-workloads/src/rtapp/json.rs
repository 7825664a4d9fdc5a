//! The JSON reader under the rt-app front end: strict JSON plus json-c's C comments, objects
//! kept as ordered member lists (duplicates included), and a 1-based line:column on every key
//! and value. serde_json gives none of the last three, and rt-app files need all of them:
//! rt-app itself (json-c) accepts duplicate keys and comments, so real files use them.
//!
//! Columns count Unicode scalar values (a tab is one column), which is what editors that show
//! "Ln, Col" and `grep -n`-style tools agree on for ASCII files.

use super::model::Pos;

/// Nesting limit: far beyond any rt-app file (which nests five deep), and low enough that the
/// recursive descent cannot overflow the stack on hostile input.
const MAX_DEPTH: usize = 128;

/// One JSON value and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Value {
    pub pos: Pos,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Int(i64),
    /// Kept only so that "expected an integer" can name what was found instead.
    Float(f64),
    Str(String),
    Array(Vec<Value>),
    /// Members in file order; a key may occur more than once (the rt-app layer decides).
    Object(Vec<Member>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member {
    pub key: String,
    pub key_pos: Pos,
    pub value: Value,
}

impl Kind {
    /// Article and noun for messages such as "expected a string, found an array".
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a number with a fraction or exponent",
            Kind::Str(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonError {
    pub pos: Pos,
    pub message: String,
}

/// Parses one JSON document (any value at the top; the rt-app layer insists on an object).
pub(crate) fn parse(text: &str) -> Result<Value, JsonError> {
    let mut r = Reader {
        bytes: text.as_bytes(),
        idx: 0,
        line: 1,
        column: 1,
    };
    // Editors on Windows like to prepend a BOM; json-c skips it too.
    if text.starts_with('\u{feff}') {
        r.idx = '\u{feff}'.len_utf8();
    }
    r.skip_space()?;
    let value = r.value(0)?;
    r.skip_space()?;
    if r.idx < r.bytes.len() {
        return Err(r.error_here(format!(
            "unexpected {} after the end of the document",
            r.describe_next()
        )));
    }
    Ok(value)
}

struct Reader<'a> {
    bytes: &'a [u8],
    idx: usize,
    /// Position of the character starting at `idx`.
    line: u32,
    column: u32,
}

impl Reader<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn error_at(pos: Pos, message: impl Into<String>) -> JsonError {
        JsonError {
            pos,
            message: message.into(),
        }
    }

    fn error_here(&self, message: impl Into<String>) -> JsonError {
        Self::error_at(self.pos(), message)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.idx).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.idx + ahead).copied()
    }

    /// Consumes one byte. A UTF-8 continuation byte does not move the column, so a multi-byte
    /// character advances it by exactly one.
    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.idx += 1;
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else if b & 0xC0 != 0x80 {
            self.column += 1;
        }
        Some(b)
    }

    fn describe_next(&self) -> String {
        match self.peek() {
            None => "end of file".to_string(),
            Some(_) => {
                let rest = std::str::from_utf8(&self.bytes[self.idx..]).unwrap_or("");
                match rest.chars().next() {
                    Some(c) if c.is_control() => format!("character {:?}", c),
                    Some(c) => format!("character '{c}'"),
                    None => "byte".to_string(),
                }
            }
        }
    }

    /// Whitespace and comments, which json-c (and so rt-app) accepts wherever whitespace is.
    fn skip_space(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {
                    self.bump();
                }
                Some(b'/') => match self.peek_at(1) {
                    Some(b'/') => {
                        while let Some(b) = self.peek() {
                            if b == b'\n' {
                                break;
                            }
                            self.bump();
                        }
                    }
                    Some(b'*') => {
                        let start = self.pos();
                        self.bump();
                        self.bump();
                        loop {
                            match self.peek() {
                                None => {
                                    return Err(Self::error_at(start, "unterminated /* comment"))
                                }
                                Some(b'*') if self.peek_at(1) == Some(b'/') => {
                                    self.bump();
                                    self.bump();
                                    break;
                                }
                                Some(_) => {
                                    self.bump();
                                }
                            }
                        }
                    }
                    _ => {
                        return Err(
                            self.error_here("unexpected '/' (comments are /* ... */ or // ...)")
                        )
                    }
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        let pos = self.pos();
        let kind = match self.peek() {
            None => return Err(self.error_here("unexpected end of file, expected a value")),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b) if b.is_ascii_alphabetic() => self.word()?,
            Some(_) => {
                return Err(self.error_here(format!(
                    "unexpected {}, expected a value",
                    self.describe_next()
                )))
            }
        };
        Ok(Value { pos, kind })
    }

    fn enter(&self, depth: usize) -> Result<usize, JsonError> {
        if depth >= MAX_DEPTH {
            return Err(self.error_here(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(depth + 1)
    }

    fn object(&mut self, depth: usize) -> Result<Kind, JsonError> {
        let depth = self.enter(depth)?;
        self.bump(); // '{'
        let mut members = Vec::new();
        self.skip_space()?;
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space()?;
            let key_pos = self.pos();
            if self.peek() != Some(b'"') {
                return Err(self.error_here(format!(
                    "expected a string key, found {}",
                    self.describe_next()
                )));
            }
            let key = self.string()?;
            self.skip_space()?;
            if self.peek() != Some(b':') {
                return Err(self.error_here(format!(
                    "expected ':' after key \"{key}\", found {}",
                    self.describe_next()
                )));
            }
            self.bump();
            self.skip_space()?;
            let value = self.value(depth)?;
            members.push(Member {
                key,
                key_pos,
                value,
            });
            self.skip_space()?;
            match self.peek() {
                Some(b',') => {
                    let comma = self.pos();
                    self.bump();
                    self.skip_space()?;
                    if self.peek() == Some(b'}') {
                        return Err(Self::error_at(
                            comma,
                            "trailing comma before '}' is not allowed",
                        ));
                    }
                }
                Some(b'}') => {
                    self.bump();
                    return Ok(Kind::Object(members));
                }
                _ => {
                    return Err(self.error_here(format!(
                        "expected ',' or '}}' after a member, found {}",
                        self.describe_next()
                    )))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, JsonError> {
        let depth = self.enter(depth)?;
        self.bump(); // '['
        let mut items = Vec::new();
        self.skip_space()?;
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_space()?;
            items.push(self.value(depth)?);
            self.skip_space()?;
            match self.peek() {
                Some(b',') => {
                    let comma = self.pos();
                    self.bump();
                    self.skip_space()?;
                    if self.peek() == Some(b']') {
                        return Err(Self::error_at(
                            comma,
                            "trailing comma before ']' is not allowed",
                        ));
                    }
                }
                Some(b']') => {
                    self.bump();
                    return Ok(Kind::Array(items));
                }
                _ => {
                    return Err(self.error_here(format!(
                        "expected ',' or ']' after an array element, found {}",
                        self.describe_next()
                    )))
                }
            }
        }
    }

    /// Reads a string starting at its opening quote.
    fn string(&mut self) -> Result<String, JsonError> {
        let start = self.pos();
        self.bump(); // '"'
        let mut out: Vec<u8> = Vec::new();
        loop {
            let here = self.pos();
            match self.bump() {
                None => return Err(Self::error_at(start, "unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => self.escape(here, &mut out)?,
                Some(b) if b < 0x20 => {
                    return Err(Self::error_at(
                        here,
                        "control character in string (missing closing quote?)",
                    ))
                }
                // Bytes of a multi-byte character are copied whole, so `out` stays UTF-8.
                Some(b) => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| Self::error_at(start, "string is not valid UTF-8"))
    }

    fn escape(&mut self, at: Pos, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let simple = match self.bump() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let first = self.hex4(at)?;
                let c = match first {
                    0xD800..=0xDBFF => {
                        if self.peek() != Some(b'\\') || self.peek_at(1) != Some(b'u') {
                            return Err(Self::error_at(
                                at,
                                "unpaired UTF-16 surrogate in \\u escape",
                            ));
                        }
                        self.bump();
                        self.bump();
                        let second = self.hex4(at)?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(Self::error_at(
                                at,
                                "unpaired UTF-16 surrogate in \\u escape",
                            ));
                        }
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        return Err(Self::error_at(
                            at,
                            "unpaired UTF-16 surrogate in \\u escape",
                        ))
                    }
                    _ => first,
                };
                let c =
                    char::from_u32(c).ok_or_else(|| Self::error_at(at, "invalid \\u escape"))?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                return Ok(());
            }
            _ => return Err(Self::error_at(at, "invalid escape sequence in string")),
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self, at: Pos) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self
                .peek()
                .and_then(|b| (b as char).to_digit(16))
                .ok_or_else(|| Self::error_at(at, "\\u must be followed by 4 hex digits"))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let mut n = 0;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
            n += 1;
        }
        n
    }

    fn number(&mut self) -> Result<Kind, JsonError> {
        let start_pos = self.pos();
        let start = self.idx;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        let int_start = self.idx;
        if self.digits() == 0 {
            return Err(Self::error_at(start_pos, "expected digits after '-'"));
        }
        if self.bytes[int_start] == b'0' && self.idx - int_start > 1 {
            return Err(Self::error_at(
                start_pos,
                "numbers must not have leading zeros",
            ));
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            is_float = true;
            self.bump();
            if self.digits() == 0 {
                return Err(self.error_here("expected digits after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if self.digits() == 0 {
                return Err(self.error_here("expected digits in the exponent"));
            }
        }
        // Only ASCII was consumed, so the slice is valid UTF-8.
        let text = std::str::from_utf8(&self.bytes[start..self.idx]).unwrap_or("");
        if is_float {
            text.parse::<f64>()
                .map(Kind::Float)
                .map_err(|_| Self::error_at(start_pos, format!("invalid number {text}")))
        } else {
            text.parse::<i64>().map(Kind::Int).map_err(|_| {
                Self::error_at(start_pos, format!("integer {text} does not fit in 64 bits"))
            })
        }
    }

    fn word(&mut self) -> Result<Kind, JsonError> {
        let start_pos = self.pos();
        let start = self.idx;
        while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.bump();
        }
        match &self.bytes[start..self.idx] {
            b"true" => Ok(Kind::Bool(true)),
            b"false" => Ok(Kind::Bool(false)),
            b"null" => Ok(Kind::Null),
            w => Err(Self::error_at(
                start_pos,
                format!(
                    "unexpected word '{}' (strings need double quotes)",
                    String::from_utf8_lossy(w)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: u32, column: u32) -> Pos {
        Pos { line, column }
    }

    fn members(v: &Value) -> &[Member] {
        match &v.kind {
            Kind::Object(m) => m,
            other => panic!("not an object: {other:?}"),
        }
    }

    fn err(text: &str) -> JsonError {
        parse(text).expect_err("should fail")
    }

    #[test]
    fn scalars_and_positions() {
        let v = parse("{\"a\": 1,\n  \"b\": -2.5e1, \"c\": [true, false, null], \"d\": \"x\"}")
            .unwrap();
        assert_eq!(v.pos, p(1, 1));
        let m = members(&v);
        assert_eq!(m[0].key, "a");
        assert_eq!(m[0].key_pos, p(1, 2));
        assert_eq!(
            m[0].value,
            Value {
                pos: p(1, 7),
                kind: Kind::Int(1)
            }
        );
        assert_eq!(m[1].key_pos, p(2, 3));
        assert_eq!(m[1].value.pos, p(2, 8));
        assert_eq!(m[1].value.kind, Kind::Float(-25.0));
        let Kind::Array(items) = &m[2].value.kind else {
            panic!()
        };
        assert_eq!(
            items.iter().map(|v| v.kind.clone()).collect::<Vec<_>>(),
            vec![Kind::Bool(true), Kind::Bool(false), Kind::Null]
        );
        // Line 2 is `  "b": -2.5e1, "c": [true, ...`: `[` is the 21st character.
        assert_eq!(m[2].value.pos, p(2, 21));
        assert_eq!(items[0].pos, p(2, 22));
        assert_eq!(m[3].value.kind, Kind::Str("x".into()));
    }

    #[test]
    fn key_order_and_duplicates_are_kept() {
        let v = parse(r#"{"z": 1, "a": 2, "z": 3, "m": 4}"#).unwrap();
        let keys: Vec<&str> = members(&v).iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["z", "a", "z", "m"]);
        assert_eq!(members(&v)[2].value.kind, Kind::Int(3));
    }

    #[test]
    fn comments_anywhere_whitespace_is() {
        let text = "// head\n/* block\n over lines */ { /*a*/ \"k\" /*b*/ : /*c*/ [1 // one\n, /**/ 2] // end\n } // tail";
        let v = parse(text).unwrap();
        let m = members(&v);
        assert_eq!(m[0].key, "k");
        assert_eq!(m[0].key_pos, p(3, 24));
        let Kind::Array(items) = &m[0].value.kind else {
            panic!()
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].pos, p(4, 8));
    }

    #[test]
    fn string_escapes() {
        let v =
            parse(r#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "ünï"]"#).unwrap();
        let Kind::Array(items) = v.kind else { panic!() };
        assert_eq!(items[0].kind, Kind::Str("a\"b\\c/d\u{8}\u{c}\n\r\t".into()));
        assert_eq!(items[1].kind, Kind::Str("é€".into()));
        assert_eq!(items[2].kind, Kind::Str("😀".into()));
        assert_eq!(items[3].kind, Kind::Str("ünï".into()));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // 'é' and '€' take two and three bytes but one column each: key "x" is the 12th
        // character and its value the 17th.
        let v = parse("{\"é\": \"€\", \"x\": 1}").unwrap();
        let m = members(&v);
        assert_eq!(m[1].key_pos, p(1, 12));
        assert_eq!(m[1].value.pos, p(1, 17));
    }

    #[test]
    fn integers_and_floats() {
        let v = parse("[0, -0, 9223372036854775807, -9223372036854775808, 1.0, 1e3]").unwrap();
        let Kind::Array(items) = v.kind else { panic!() };
        let kinds: Vec<Kind> = items.into_iter().map(|v| v.kind).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Int(0),
                Kind::Int(0),
                Kind::Int(i64::MAX),
                Kind::Int(i64::MIN),
                Kind::Float(1.0),
                Kind::Float(1000.0)
            ]
        );
    }

    #[test]
    fn trailing_commas_are_rejected_at_the_comma() {
        let e = err("{\"a\": 1,\n}");
        assert_eq!(e.pos, p(1, 8));
        assert!(e.message.contains("trailing comma"), "{}", e.message);
        let e = err("[1, 2, /* c */ ]");
        assert_eq!(e.pos, p(1, 6));
        assert!(e.message.contains("trailing comma"), "{}", e.message);
    }

    #[test]
    fn syntax_errors_carry_positions() {
        assert_eq!(err("{\"a\" 1}").pos, p(1, 6));
        assert_eq!(err("{\"a\": 1 \"b\": 2}").pos, p(1, 9));
        // The newline inside the string is the 13th character of line 2.
        assert_eq!(err("{\n  \"a\": \"open\n}").pos, p(2, 13));
        assert_eq!(err("{\"a\": \"never closed").pos, p(1, 7));
        assert_eq!(err("  /* open").pos, p(1, 3));
        assert_eq!(err("{a: 1}").pos, p(1, 2));
        assert_eq!(err("[True]").pos, p(1, 2));
        assert_eq!(err("[01]").pos, p(1, 2));
        assert_eq!(err("[1.]").pos, p(1, 4));
        assert_eq!(err("[99999999999999999999]").pos, p(1, 2));
        assert_eq!(err("{} x").pos, p(1, 4));
        assert_eq!(err("[\"\\x\"]").pos, p(1, 3));
        assert_eq!(err("[\"\\udc00\"]").pos, p(1, 3));
        assert_eq!(err("/ {}").pos, p(1, 1));
        assert_eq!(err("").pos, p(1, 1));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        let e = err(&text);
        assert!(e.message.contains("nesting"), "{}", e.message);
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let v = parse("\u{feff}{}").unwrap();
        assert_eq!(v.kind, Kind::Object(vec![]));
    }
}
