//! A TOML document as a tree that remembers where every value came from (file and byte span),
//! plus the typed readers the platform loader uses. Owning the tree lets us (a) report
//! `file:line: key.path: message` for every validation error, (b) read decimal literals exactly
//! from their source text (`0.35` µs is 350 ns, never a float), (c) merge a file over the
//! platform it `extends`, and (d) pick up the trailing `# comment` of a value as its provenance.
//!
//! Spans come from toml_edit's document parser (`ImDocument`, the parser the `toml` crate itself
//! uses), through its public `span()` accessors: a value's span is its literal, a table's is its
//! header. Tables created implicitly by a dotted header (`[a.b.c]` creates `a` and `a.b`) or by
//! dotted keys carry no span; their location is the first span found inside them.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;

use crate::error::PlatformError;

/// One source text (a platform file or a generated `smp:N` overlay).
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub name: String,
    pub text: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub span: Option<Range<usize>>,
    /// Index into [`Docs::sources`].
    pub src: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Str(String),
    Int(i64),
    /// A float; its value is re-read exactly from the source text.
    Float,
    Bool(bool),
    Datetime,
    Array(Vec<Node>),
    Table(Vec<(String, Node)>),
}

impl Kind {
    fn type_name(&self) -> &'static str {
        match self {
            Kind::Str(_) => "a string",
            Kind::Int(_) => "an integer",
            Kind::Float => "a float",
            Kind::Bool(_) => "a boolean",
            Kind::Datetime => "a datetime",
            Kind::Array(_) => "an array",
            Kind::Table(_) => "a table",
        }
    }
}

/// A node from a toml_edit item (`None` items do not occur in a parsed document).
fn node_of_item(item: &toml_edit::Item) -> Node {
    use toml_edit::Item;
    match item {
        Item::Value(v) => node_of_value(v),
        Item::Table(t) => Node {
            span: t.span(),
            src: 0,
            kind: Kind::Table(
                t.iter()
                    .map(|(k, v)| (k.to_string(), node_of_item(v)))
                    .collect(),
            ),
        },
        Item::ArrayOfTables(a) => Node {
            span: a.span(),
            src: 0,
            kind: Kind::Array(
                a.iter()
                    .map(|t| Node {
                        span: t.span(),
                        src: 0,
                        kind: Kind::Table(
                            t.iter()
                                .map(|(k, v)| (k.to_string(), node_of_item(v)))
                                .collect(),
                        ),
                    })
                    .collect(),
            ),
        },
        Item::None => Node {
            span: None,
            src: 0,
            kind: Kind::Table(Vec::new()),
        },
    }
}

fn node_of_value(v: &toml_edit::Value) -> Node {
    use toml_edit::Value;
    let kind = match v {
        Value::String(s) => Kind::Str(s.value().clone()),
        Value::Integer(i) => Kind::Int(*i.value()),
        Value::Float(_) => Kind::Float,
        Value::Boolean(b) => Kind::Bool(*b.value()),
        Value::Datetime(_) => Kind::Datetime,
        Value::Array(a) => Kind::Array(a.iter().map(node_of_value).collect()),
        Value::InlineTable(t) => Kind::Table(
            t.iter()
                .map(|(k, v)| (k.to_string(), node_of_value(v)))
                .collect(),
        ),
    };
    Node {
        span: v.span(),
        src: 0,
        kind,
    }
}

fn set_src(node: &mut Node, src: usize) {
    node.src = src;
    match &mut node.kind {
        Kind::Array(v) => v.iter_mut().for_each(|n| set_src(n, src)),
        Kind::Table(v) => v.iter_mut().for_each(|(_, n)| set_src(n, src)),
        _ => {}
    }
}

/// Where a value was written and the comment that follows it on the same line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// `file:line`.
    pub at: String,
    /// The trailing `# …` comment of that line, without the `#`; empty if none.
    pub comment: String,
}

/// All source texts of one platform (the file and the files it extends).
#[derive(Debug, Default)]
pub(crate) struct Docs {
    pub sources: Vec<Source>,
}

impl Docs {
    /// Parses `text` as a TOML document named `name`; the root node is a table.
    pub fn parse(&mut self, name: &str, text: &str) -> Result<Node, PlatformError> {
        let src = self.sources.len();
        self.sources.push(Source {
            name: name.to_string(),
            text: text.to_string(),
        });
        let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(s) => self.line_col(src, s.start),
                None => (1, 1),
            };
            PlatformError::Syntax {
                file: name.to_string(),
                line,
                column,
                message: e.message().trim().replace('\n', "; "),
            }
        })?;
        let mut root = Node {
            span: None,
            src,
            kind: Kind::Table(
                doc.as_table()
                    .iter()
                    .map(|(k, v)| (k.to_string(), node_of_item(v)))
                    .collect(),
            ),
        };
        set_src(&mut root, src);
        Ok(root)
    }

    fn line_col(&self, src: usize, offset: usize) -> (usize, usize) {
        let text = &self.sources[src].text;
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
        (line, col)
    }

    /// First span found in `node` or its descendants (implicit tables have none).
    fn any_span(node: &Node) -> Option<(usize, Range<usize>)> {
        if let Some(s) = &node.span {
            return Some((node.src, s.clone()));
        }
        match &node.kind {
            Kind::Array(v) => v.iter().find_map(Docs::any_span),
            Kind::Table(v) => v.iter().find_map(|(_, n)| Docs::any_span(n)),
            _ => None,
        }
    }

    /// `(file, line)` of a node; line 1 of its file when nothing in it has a span.
    pub fn locate(&self, node: &Node) -> (String, usize) {
        match Docs::any_span(node) {
            Some((src, span)) => (
                self.sources[src].name.clone(),
                self.line_col(src, span.start).0,
            ),
            None => (self.sources[node.src].name.clone(), 1),
        }
    }

    /// The source text of a scalar (for exact decimal parsing).
    pub fn raw<'a>(&'a self, node: &Node) -> Option<&'a str> {
        let s = node.span.as_ref()?;
        self.sources[node.src].text.get(s.clone())
    }

    /// Provenance of a value: its file:line and the comment that follows it on its last line.
    pub fn provenance(&self, node: &Node) -> Provenance {
        let (file, line) = self.locate(node);
        let comment = match &node.span {
            Some(span) => {
                let text = &self.sources[node.src].text;
                let end = span.end.min(text.len());
                let eol = text[end..].find('\n').map_or(text.len(), |i| end + i);
                trailing_comment(&text[end..eol])
            }
            None => String::new(),
        };
        Provenance {
            at: format!("{file}:{line}"),
            comment,
        }
    }

    pub fn invalid(&self, node: &Node, key: &str, message: impl Into<String>) -> PlatformError {
        let (file, line) = self.locate(node);
        PlatformError::Invalid {
            file,
            line,
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// The `# comment` in the rest of a line after a value, skipping `#` inside strings.
fn trailing_comment(rest: &str) -> String {
    let mut in_basic = false;
    let mut in_literal = false;
    let mut escaped = false;
    for (i, ch) in rest.char_indices() {
        if in_basic {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_basic = false;
            }
            continue;
        }
        if in_literal {
            if ch == '\'' {
                in_literal = false;
            }
            continue;
        }
        match ch {
            '"' => in_basic = true,
            '\'' => in_literal = true,
            '#' => return rest[i + 1..].trim().to_string(),
            _ => {}
        }
    }
    String::new()
}

/// Merges `over` onto `base`: tables merge key by key (recursively), anything else — scalars
/// and arrays, including arrays of tables — is replaced whole.
pub(crate) fn merge(base: &mut Node, over: Node) {
    match (&mut base.kind, over.kind) {
        (Kind::Table(b), Kind::Table(o)) => {
            for (k, v) in o {
                match b.iter_mut().find(|(bk, _)| *bk == k) {
                    Some((_, bv)) => merge(bv, v),
                    None => b.push((k, v)),
                }
            }
        }
        (_, kind) => {
            base.kind = kind;
            base.span = over.span;
            base.src = over.src;
        }
    }
}

/// Removes and returns a top-level entry of a table node.
pub(crate) fn take_key(node: &mut Node, key: &str) -> Option<Node> {
    if let Kind::Table(v) = &mut node.kind {
        let i = v.iter().position(|(k, _)| k == key)?;
        return Some(v.remove(i).1);
    }
    None
}

pub(crate) fn has_key(node: &Node, key: &str) -> bool {
    matches!(&node.kind, Kind::Table(v) if v.iter().any(|(k, _)| k == key))
}

// ---------------------------------------------------------------------------------------------
// Exact decimals
// ---------------------------------------------------------------------------------------------

/// Parses a non-negative decimal literal (`12`, `0.35`, `1_000.5`) exactly into an integer
/// count of `10^-scale` units: `parse_decimal("0.35", 3) == Ok(350)`. No floating point.
pub(crate) fn parse_decimal(s: &str, scale: u32) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() {
        return Err("empty number".into());
    }
    if t.starts_with('-') {
        return Err(format!("`{s}` is negative"));
    }
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, f),
        None => (t, ""),
    };
    let digits_ok = |p: &str| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit() || b == b'_')
            && !p.starts_with('_')
            && !p.ends_with('_')
    };
    if !digits_ok(int) || (t.contains('.') && !digits_ok(frac)) {
        return Err(format!(
            "`{s}` is not a plain decimal number (no exponent, inf or nan)"
        ));
    }
    let int: String = int.chars().filter(|&c| c != '_').collect();
    let frac: String = frac.chars().filter(|&c| c != '_').collect();
    let (kept, dropped) = frac.split_at(frac.len().min(scale as usize));
    if dropped.bytes().any(|b| b != b'0') {
        return Err(format!(
            "`{s}` has more than {scale} decimal places (finer than the stored unit)"
        ));
    }
    let overflow = || format!("`{s}` is too large");
    let mut v: u64 = 0;
    for b in int.bytes().chain(kept.bytes()) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(overflow)?;
    }
    for _ in kept.len()..scale as usize {
        v = v.checked_mul(10).ok_or_else(overflow)?;
    }
    Ok(v)
}

/// Formats `v` units of `10^-scale` as a decimal without trailing zeros (`350, 3` → `0.35`).
pub fn format_decimal(v: u64, scale: u32) -> String {
    let p = 10u64.pow(scale);
    let (i, f) = (v / p, v % p);
    if f == 0 {
        return i.to_string();
    }
    let frac = format!("{:0width$}", f, width = scale as usize);
    format!("{i}.{}", frac.trim_end_matches('0'))
}

// ---------------------------------------------------------------------------------------------
// Typed readers
// ---------------------------------------------------------------------------------------------

/// Reader context: the sources (for locations) and the provenance of every value read.
pub(crate) struct Ctx<'d> {
    pub docs: &'d Docs,
    pub prov: RefCell<BTreeMap<String, Provenance>>,
}

/// A table being read: remembers which keys were consumed so that unknown keys are reported.
pub(crate) struct Tbl<'d, 'n> {
    pub ctx: &'d Ctx<'d>,
    pub node: &'n Node,
    pub path: String,
    entries: &'n [(String, Node)],
    used: RefCell<Vec<bool>>,
}

impl<'d> Ctx<'d> {
    pub fn new(docs: &'d Docs) -> Ctx<'d> {
        Ctx {
            docs,
            prov: RefCell::new(BTreeMap::new()),
        }
    }

    pub fn table<'n>(&'d self, node: &'n Node, path: &str) -> Result<Tbl<'d, 'n>, PlatformError> {
        match &node.kind {
            Kind::Table(entries) => Ok(Tbl {
                ctx: self,
                node,
                path: path.to_string(),
                entries,
                used: RefCell::new(vec![false; entries.len()]),
            }),
            k => Err(self.docs.invalid(
                node,
                path,
                format!("expected a table, found {}", k.type_name()),
            )),
        }
    }

    pub fn record(&self, node: &Node, path: &str) {
        self.prov
            .borrow_mut()
            .insert(path.to_string(), self.docs.provenance(node));
    }

    pub fn err(&self, node: &Node, path: &str, msg: impl Into<String>) -> PlatformError {
        self.docs.invalid(node, path, msg)
    }

    fn type_err(&self, node: &Node, path: &str, want: &str) -> PlatformError {
        self.err(
            node,
            path,
            format!("expected {want}, found {}", node.kind.type_name()),
        )
    }

    pub fn as_str<'n>(&self, node: &'n Node, path: &str) -> Result<&'n str, PlatformError> {
        match &node.kind {
            Kind::Str(s) => {
                self.record(node, path);
                Ok(s)
            }
            _ => Err(self.type_err(node, path, "a string")),
        }
    }

    pub fn as_bool(&self, node: &Node, path: &str) -> Result<bool, PlatformError> {
        match &node.kind {
            Kind::Bool(b) => {
                self.record(node, path);
                Ok(*b)
            }
            _ => Err(self.type_err(node, path, "true or false")),
        }
    }

    /// A non-negative integer within `lo..=hi`.
    pub fn as_uint(&self, node: &Node, path: &str, lo: u64, hi: u64) -> Result<u64, PlatformError> {
        match &node.kind {
            Kind::Int(v) if *v >= 0 && (*v as u64) >= lo && (*v as u64) <= hi => {
                self.record(node, path);
                Ok(*v as u64)
            }
            Kind::Int(_) => Err(self.err(node, path, format!("must be {lo}..={hi}"))),
            _ => Err(self.type_err(node, path, "an integer")),
        }
    }

    /// A non-negative decimal number read exactly, in units of `10^-scale`.
    pub fn as_decimal(&self, node: &Node, path: &str, scale: u32) -> Result<u64, PlatformError> {
        let v = match &node.kind {
            Kind::Int(v) if *v < 0 => return Err(self.err(node, path, "must not be negative")),
            Kind::Int(v) => (*v as u64)
                .checked_mul(10u64.pow(scale))
                .ok_or_else(|| self.err(node, path, "too large"))?,
            Kind::Float => {
                let raw = self
                    .docs
                    .raw(node)
                    .ok_or_else(|| self.err(node, path, "number without source text"))?;
                parse_decimal(raw, scale).map_err(|m| self.err(node, path, m))?
            }
            _ => return Err(self.type_err(node, path, "a number")),
        };
        self.record(node, path);
        Ok(v)
    }

    /// A duration in nanoseconds. A bare number is in `default_unit` (µs for every duration in
    /// the platform files, as in the spec's tables); a string carries its unit:
    /// `"350 ns"`, `"0.35 us"`, `"0.35 µs"`, `"1.2 ms"`, `"2 s"`.
    pub fn as_duration_ns(&self, node: &Node, path: &str) -> Result<u64, PlatformError> {
        match &node.kind {
            Kind::Str(s) => {
                let t = s.trim();
                let split = t
                    .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == '+'))
                    .unwrap_or(t.len());
                let (num, unit) = (t[..split].trim(), t[split..].trim());
                let scale = match unit {
                    "ns" => 0,
                    "us" | "µs" => 3,
                    "ms" => 6,
                    "s" => 9,
                    _ => {
                        return Err(self.err(
                            node,
                            path,
                            format!("`{s}`: unit must be ns, us, µs, ms or s"),
                        ))
                    }
                };
                let v = parse_decimal(num, scale).map_err(|m| self.err(node, path, m))?;
                self.record(node, path);
                Ok(v)
            }
            Kind::Int(_) | Kind::Float => self.as_decimal(node, path, 3),
            _ => Err(self.type_err(node, path, "a number of µs or a string with a unit")),
        }
    }

    pub fn as_array<'n>(&self, node: &'n Node, path: &str) -> Result<&'n [Node], PlatformError> {
        match &node.kind {
            Kind::Array(v) => Ok(v),
            _ => Err(self.type_err(node, path, "an array")),
        }
    }
}

impl<'d, 'n> Tbl<'d, 'n> {
    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The value of `key`, marking it consumed.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        self.used.borrow_mut()[i] = true;
        Some(&self.entries[i].1)
    }

    /// Error for a missing required key, located at this table.
    pub fn missing(&self, key: &str) -> PlatformError {
        self.ctx
            .err(self.node, &self.key_path(key), "required key is missing")
    }

    pub fn err(&self, key: &str, msg: impl Into<String>) -> PlatformError {
        match self.entries.iter().find(|(k, _)| k == key) {
            Some((_, n)) => self.ctx.err(n, &self.key_path(key), msg),
            None => self.ctx.err(self.node, &self.key_path(key), msg),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'n str>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_str(n, &self.key_path(key)))
            .transpose()
    }

    pub fn req_str(&self, key: &str) -> Result<&'n str, PlatformError> {
        self.opt_str(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_bool(n, &self.key_path(key)))
            .transpose()
    }

    pub fn opt_uint(&self, key: &str, lo: u64, hi: u64) -> Result<Option<u64>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_uint(n, &self.key_path(key), lo, hi))
            .transpose()
    }

    pub fn opt_decimal(&self, key: &str, scale: u32) -> Result<Option<u64>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_decimal(n, &self.key_path(key), scale))
            .transpose()
    }

    pub fn opt_duration_ns(&self, key: &str) -> Result<Option<u64>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_duration_ns(n, &self.key_path(key)))
            .transpose()
    }

    pub fn opt_table(&self, key: &str) -> Result<Option<Tbl<'d, 'n>>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.table(n, &self.key_path(key)))
            .transpose()
    }

    pub fn opt_array(&self, key: &str) -> Result<Option<&'n [Node]>, PlatformError> {
        self.get(key)
            .map(|n| self.ctx.as_array(n, &self.key_path(key)))
            .transpose()
    }

    /// Keys present in the table, in file order (for tables whose keys are data, like costs).
    pub fn keys(&self) -> impl Iterator<Item = &'n str> + 'n {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Fails on the first key that nobody read: a typo must not pass silently.
    pub fn finish(self) -> Result<(), PlatformError> {
        let used = self.used.borrow();
        for (i, (k, n)) in self.entries.iter().enumerate() {
            if !used[i] {
                return Err(self.ctx.err(n, &self.key_path(k), "unknown key"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        // Table 1.11-A writes µs with decimals; stored as integer ns (scale 3).
        assert_eq!(parse_decimal("0.35", 3), Ok(350));
        assert_eq!(parse_decimal("0.025", 3), Ok(25));
        assert_eq!(parse_decimal("1_000.5", 3), Ok(1_000_500));
        assert_eq!(parse_decimal("60", 3), Ok(60_000));
        assert_eq!(parse_decimal("0.10", 6), Ok(100_000));
        assert_eq!(parse_decimal("1804.8", 3), Ok(1_804_800)); // MHz -> kHz
        assert_eq!(parse_decimal("0.3500", 3), Ok(350)); // trailing zeros are fine
        assert!(parse_decimal("0.0005", 3).is_err()); // 0.5 ns cannot be stored
        assert!(parse_decimal("1e3", 3).is_err());
        assert!(parse_decimal("-1", 3).is_err());
        assert!(parse_decimal("inf", 3).is_err());
        assert!(parse_decimal("99999999999999999999", 3).is_err());
        assert_eq!(format_decimal(350, 3), "0.35");
        assert_eq!(format_decimal(60_000, 3), "60");
        assert_eq!(format_decimal(25, 3), "0.025");
    }

    #[test]
    fn spans_comments_and_implicit_tables() {
        let mut docs = Docs::default();
        let text = "a = 0.35 # from [S1]\n[x.y.z]\nb = \"q#r\" # note\n";
        let root = docs.parse("t.toml", text).unwrap();
        let ctx = Ctx::new(&docs);
        let t = ctx.table(&root, "").unwrap();
        assert_eq!(t.opt_duration_ns("a").unwrap(), Some(350));
        let x = t.opt_table("x").unwrap().unwrap();
        let y = x.opt_table("y").unwrap().unwrap();
        let z = y.opt_table("z").unwrap().unwrap();
        assert_eq!(z.opt_str("b").unwrap(), Some("q#r"));
        let prov = ctx.prov.borrow();
        assert_eq!(prov["a"].comment, "from [S1]");
        assert_eq!(prov["a"].at, "t.toml:1");
        assert_eq!(prov["x.y.z.b"].comment, "note");
        assert_eq!(prov["x.y.z.b"].at, "t.toml:3");
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let mut docs = Docs::default();
        let e = docs
            .parse("bad.toml", "a = 1\nb = = 2\nc = 3\n")
            .unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("bad.toml:2:5: "), "{s}");
        let e = docs.parse("dup.toml", "a = 1\n\na = 2\n").unwrap_err();
        assert!(
            e.to_string().starts_with("dup.toml:3:1: duplicate key"),
            "{e}"
        );
    }

    #[test]
    fn merge_replaces_scalars_and_arrays_merges_tables() {
        let mut docs = Docs::default();
        let mut base = docs
            .parse("base", "a = 1\nl = [1, 2]\n[t]\nx = 1\ny = 2\n")
            .unwrap();
        let over = docs.parse("over", "l = [3]\n[t]\ny = 5\nz = 6\n").unwrap();
        merge(&mut base, over);
        let ctx = Ctx::new(&docs);
        let t = ctx.table(&base, "").unwrap();
        assert_eq!(t.opt_uint("a", 0, 9).unwrap(), Some(1));
        assert_eq!(t.opt_array("l").unwrap().unwrap().len(), 1);
        let tt = t.opt_table("t").unwrap().unwrap();
        assert_eq!(tt.opt_uint("x", 0, 9).unwrap(), Some(1));
        assert_eq!(tt.opt_uint("y", 0, 9).unwrap(), Some(5));
        assert_eq!(tt.opt_uint("z", 0, 9).unwrap(), Some(6));
        assert_eq!(ctx.prov.borrow()["t.y"].at, "over:3");
    }
}
