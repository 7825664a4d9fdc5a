//! tbench's command line: `tbench [dbench options] N [server]` (netbench.md §15.1). The
//! options are dbench's ([`crate::dbench::parse_common`]); tbench adds the server host and
//! `-T`/`--tcp-options`.
//!
//! | argument | modelled |
//! |---|---|
//! | dbench's options | as dbench (`-t`, `--warmup`, `--loadfile`, `-D`, `--show-execute-time`, `--run-once`, `--skip-cleanup`) |
//! | `server` | `localhost` (the default) or `127.0.0.1`: the loopback connection; any other host is an error |
//! | `-T`, `--tcp-options OPTS` | `TCP_NODELAY` (`=0` turns it off), `SO_REUSEADDR`, `SO_KEEPALIVE` (no effect on loopback); default `TCP_NODELAY SO_REUSEADDR` |

use crate::cmdline::{self, OptionError};
use crate::dbench::{parse_common, Options};

pub const PROG: &str = "tbench";

/// dbench's default socket options (`tcp_options` in dbench.c).
pub const DEFAULT_TCP_OPTIONS: &str = "TCP_NODELAY SO_REUSEADDR";

/// A parsed tbench command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TbenchOptions {
    pub dbench: Options,
    /// The server host as given (`localhost` when absent).
    pub server: String,
    /// Whether the sockets get `TCP_NODELAY`.
    pub nodelay: bool,
}

/// Parses the words after `tbench`.
pub fn parse(args: &[String]) -> Result<TbenchOptions, OptionError> {
    let (o, rest) = parse_common(PROG, args)?;
    let server = match rest.first() {
        None => "localhost".to_string(),
        Some(h) if h == "localhost" || h == "127.0.0.1" => h.clone(),
        Some(h) => {
            return Err(OptionError::BadValue {
                program: PROG,
                option: "server".to_string(),
                reason: format!(
                    "'{h}': only a server on this machine is modelled (localhost, 127.0.0.1)"
                ),
            })
        }
    };
    if let Some(extra) = rest.get(1) {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: extra.clone(),
        });
    }
    let tcp = o
        .tcp_options
        .clone()
        .unwrap_or_else(|| DEFAULT_TCP_OPTIONS.to_string());
    let nodelay = socket_options(&tcp)?;
    // the parent, tbench_srv, and one client and one server process per client
    cmdline::check_tasks(
        PROG,
        &format!("N = {}", o.clients),
        2 + 2 * o.clients as u128,
    )?;
    Ok(TbenchOptions {
        dbench: o,
        server,
        nodelay,
    })
}

/// Samba's `set_socket_options` syntax: names separated by spaces or commas, each optionally
/// `=VALUE`. Returns whether `TCP_NODELAY` is on.
fn socket_options(text: &str) -> Result<bool, OptionError> {
    let bad = |reason: String| OptionError::BadValue {
        program: PROG,
        option: "-T".to_string(),
        reason,
    };
    let mut nodelay = false;
    for tok in text.split([' ', ',', '\t']).filter(|t| !t.is_empty()) {
        let (name, value) = match tok.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (tok, None),
        };
        let on = match value {
            None => true,
            Some(v) => match v.parse::<i64>() {
                Ok(n) => n != 0,
                Err(_) => return Err(bad(format!("'{tok}': the value must be a number"))),
            },
        };
        match name {
            "TCP_NODELAY" => nodelay = on,
            "SO_REUSEADDR" | "SO_KEEPALIVE" => {}
            "SO_SNDBUF" | "SO_RCVBUF" | "SO_SNDLOWAT" | "SO_RCVLOWAT" | "IPTOS_LOWDELAY"
            | "IPTOS_THROUGHPUT" | "SO_BROADCAST" => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: "-T".to_string(),
                    detail: format!("socket option {name}"),
                })
            }
            _ => return Err(bad(format!("unknown socket option '{name}'"))),
        }
    }
    Ok(nodelay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<TbenchOptions, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn mmtests_command_line() {
        // netbench.md §15.1: mmtests runs `tbench -t 120 --loadfile client-tiny.txt
        // --show-execute-time N 127.0.0.1`
        let o = p("-t 120 --loadfile client-tiny.txt --show-execute-time 4 127.0.0.1").unwrap();
        assert_eq!(o.dbench.clients, 4);
        // no --warmup: a fifth of the time limit (24 s for -t 120, §15.4)
        assert_eq!((o.dbench.timelimit_secs, o.dbench.warmup_secs), (120, 24));
        assert!(o.dbench.show_execute_time);
        assert_eq!(o.server, "127.0.0.1");
        // the default socket options set TCP_NODELAY (§15.1)
        assert!(o.nodelay);
        let o = p("2").unwrap();
        assert_eq!((o.server.as_str(), o.nodelay), ("localhost", true));
        assert!(!p("-T SO_REUSEADDR 2").unwrap().nodelay);
        assert!(!p("-T TCP_NODELAY=0,SO_KEEPALIVE 2").unwrap().nodelay);
        assert!(p("--tcp-options=TCP_NODELAY 2").unwrap().nodelay);
    }

    #[test]
    fn errors_name_the_option_and_value() {
        let e = p("4 192.168.1.2").unwrap_err().to_string();
        assert!(
            e.starts_with("tbench: server:") && e.contains("'192.168.1.2'"),
            "{e}"
        );
        let e = p("4 localhost extra").unwrap_err().to_string();
        assert!(e.contains("'extra'"), "{e}");
        let e = p("-T TCP_FOO 4").unwrap_err().to_string();
        assert!(e.contains("-T") && e.contains("TCP_FOO"), "{e}");
        let e = p("-T SO_SNDBUF=65536 4").unwrap_err().to_string();
        assert!(e.contains("SO_SNDBUF") && e.contains("not modelled"), "{e}");
        let e = p("-T TCP_NODELAY=yes 4").unwrap_err().to_string();
        assert!(e.contains("'TCP_NODELAY=yes'"), "{e}");
        // dbench's own checks, under tbench's name
        let e = p("-t 0 4").unwrap_err().to_string();
        assert!(e.starts_with("tbench: -t") && e.contains("'0'"), "{e}");
        let e = p("-t 5").unwrap_err().to_string();
        assert!(e.contains("tbench [options] N"), "{e}");
        let e = p("-F 4").unwrap_err().to_string();
        assert!(e.contains("-F") && e.contains("not modelled"), "{e}");
        // 2 + 2N tasks: N = 40 000 is refused like dbench's N
        let e = p("40000").unwrap_err().to_string();
        assert!(e.contains("40000"), "{e}");
        // -T is tbench's: dbench refuses it
        let e = crate::dbench::parse(&["-T".into(), "TCP_NODELAY".into(), "1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("-T") && e.contains("tbench"), "{e}");
    }
}
