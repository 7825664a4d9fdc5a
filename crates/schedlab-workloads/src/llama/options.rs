//! `llama-batched-bench` command line (llama.cpp `common/arg.cpp`, the options the tool
//! accepts; workloads.md §9.1). llama.cpp matches whole words (`-ub` is one option, not
//! `-u -b`) and takes each value from the next word; lists are comma-separated.
//!
//! | option | modelled |
//! |---|---|
//! | `-m`, `--model FNAME` | accepted: the file is only a name (the model's costs are the platform's `[programs.llama-batched-bench]`) |
//! | `-c`, `--ctx-size N` | yes: `n_kv_max`; combinations needing more are skipped, as the tool does (default 4096; 0 is refused: no model file to read `n_ctx_train` from) |
//! | `-b`, `--batch-size N` | yes: prompt chunks of `n_batch` tokens per `llama_decode` (default 2048) |
//! | `-ub`, `--ubatch-size N` | yes: each chunk computed as graphs of ≤ `n_ubatch` tokens (default 512) |
//! | `-npp`, `-ntg`, `-npl LIST` | yes (defaults 128,256,512 / 128,256 / 1,2,4,8,16,32) |
//! | `-pps` | yes: shared prompt |
//! | `-t`, `--threads N` | yes: threads of a one-token graph (default: the CPU count) |
//! | `-tb`, `--threads-batch N` | yes: threads of graphs of more than one token (default: `-t`) |
//! | `-fa`, `--flash-attn on\|off\|auto` | printed only (default auto, shown as -1) |
//! | `-ngl`, `--gpu-layers`, `--n-gpu-layers N` | printed only (no GPU in the model) |
//! | `--poll N` | yes: the pool's polling level 0…100 (default 50): `1024 × 128 × N` CPU-relax iterations before a pool thread sleeps (whether the tool's pool uses it is **unverified**: a pool ggml creates itself takes the default) |
//! | anything else | error naming the option |
//!
//! Size caps (schedlab's own, so that a run's script of graphs stays bounded; the tool has
//! none): at most [`MAX_COMBINATIONS`] (pp, tg, pl) combinations and at most [`MAX_GRAPHS`]
//! graphs over the rows that fit the context (the warm-up, each prompt in `-b`/`-ub` pieces,
//! `tg` decodes of `pl` tokens). `-ntg 4294967295 -c 4294967295` asks for 4 294 967 295
//! decodes and is refused, naming the options.

use crate::cmdline::{self, OptionError};

pub const PROG: &str = "llama-batched-bench";

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub model: Option<String>,
    pub n_ctx: u32,
    pub n_batch: u32,
    pub n_ubatch: u32,
    pub n_pp: Vec<u32>,
    pub n_tg: Vec<u32>,
    pub n_pl: Vec<u32>,
    pub is_pp_shared: bool,
    /// `-t`; `None` = the CPU count.
    pub threads: Option<u32>,
    /// `-tb`; `None` = the same as the threads.
    pub threads_batch: Option<u32>,
    /// `flash_attn` as printed: 1 on, 0 off, -1 auto.
    pub flash_attn: i32,
    pub n_gpu_layers: i32,
    /// `--poll`: the polling level (0 = no polling).
    pub poll: u32,
}

/// Most threads the tool takes (ggml's `GGML_MAX_N_THREADS`).
pub const MAX_THREADS: u32 = 512;

/// Most (pp, tg, pl) combinations of `-npp`, `-ntg`, `-npl` (schedlab's cap; the defaults
/// make 3 × 2 × 6 = 36).
pub const MAX_COMBINATIONS: u64 = 4096;

/// Most graphs (`llama_decode` micro-batches) one run may compute (schedlab's cap: the main
/// thread's script is built at start; the seed's rows need a few hundred).
pub const MAX_GRAPHS: u64 = 1_000_000;

fn list(option: &str, value: &str) -> Result<Vec<u32>, OptionError> {
    let mut v = Vec::new();
    for part in value.split(',') {
        v.push(
            cmdline::positive_u32(PROG, option, part).map_err(|_| OptionError::BadValue {
                program: PROG,
                option: option.to_string(),
                reason: format!(
                    "expected a comma-separated list of positive integers, got '{value}'"
                ),
            })?,
        );
    }
    Ok(v)
}

/// Parses the words after `llama-batched-bench`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let mut o = Options {
        model: None,
        n_ctx: 4096,
        n_batch: 2048,
        n_ubatch: 512,
        n_pp: vec![128, 256, 512],
        n_tg: vec![128, 256],
        n_pl: vec![1, 2, 4, 8, 16, 32],
        is_pp_shared: false,
        threads: None,
        threads_batch: None,
        flash_attn: -1,
        n_gpu_layers: -1,
        poll: 50,
    };
    let mut i = 0;
    while i < args.len() {
        let opt = args[i].as_str();
        i += 1;
        if opt == "-pps" {
            o.is_pp_shared = true;
            continue;
        }
        let known = matches!(
            opt,
            "-m" | "--model"
                | "-c"
                | "--ctx-size"
                | "-b"
                | "--batch-size"
                | "-ub"
                | "--ubatch-size"
                | "-npp"
                | "-ntg"
                | "-npl"
                | "-t"
                | "--threads"
                | "-tb"
                | "--threads-batch"
                | "-fa"
                | "--flash-attn"
                | "-ngl"
                | "--gpu-layers"
                | "--n-gpu-layers"
                | "--poll"
        );
        if !known {
            if opt.starts_with('-') {
                return Err(OptionError::Unknown {
                    program: PROG,
                    option: opt.to_string(),
                });
            }
            return Err(OptionError::UnexpectedArgument {
                program: PROG,
                arg: opt.to_string(),
            });
        }
        let Some(value) = args.get(i) else {
            return Err(OptionError::MissingValue {
                program: PROG,
                option: opt.to_string(),
            });
        };
        i += 1;
        let threads = |v: &str| {
            cmdline::int_in(
                PROG,
                opt,
                v,
                1,
                MAX_THREADS as i64,
                "a thread count in 1..=512",
            )
            .map(|n| n as u32)
        };
        match opt {
            "-m" | "--model" => o.model = Some(value.clone()),
            "-c" | "--ctx-size" => o.n_ctx = cmdline::positive_u32(PROG, opt, value)?,
            "-b" | "--batch-size" => o.n_batch = cmdline::positive_u32(PROG, opt, value)?,
            "-ub" | "--ubatch-size" => o.n_ubatch = cmdline::positive_u32(PROG, opt, value)?,
            "-npp" => o.n_pp = list(opt, value)?,
            "-ntg" => o.n_tg = list(opt, value)?,
            "-npl" => o.n_pl = list(opt, value)?,
            "--poll" => {
                o.poll =
                    cmdline::int_in(PROG, opt, value, 0, 100, "a polling level in 0..=100")? as u32
            }
            "-t" | "--threads" => o.threads = Some(threads(value)?),
            "-tb" | "--threads-batch" => o.threads_batch = Some(threads(value)?),
            "-fa" | "--flash-attn" => {
                o.flash_attn = match value.as_str() {
                    "on" | "1" | "enabled" => 1,
                    "off" | "0" | "disabled" => 0,
                    "auto" | "-1" => -1,
                    _ => {
                        return Err(OptionError::BadValue {
                            program: PROG,
                            option: opt.to_string(),
                            reason: format!("expected on, off or auto, got '{value}'"),
                        })
                    }
                }
            }
            _ => {
                o.n_gpu_layers =
                    cmdline::int_in(PROG, opt, value, -1, i32::MAX as i64, "an integer ≥ -1")?
                        as i32
            }
        }
    }
    o.check_size()?;
    Ok(o)
}

/// Graphs of one `decode_helper()` call of `tokens` tokens: chunks of `n_batch`, each in
/// pieces of at most `n_ubatch`.
pub fn graphs_of(tokens: u64, n_batch: u32, n_ubatch: u32) -> u64 {
    let (b, ub) = (u64::from(n_batch.max(1)), u64::from(n_ubatch.max(1)));
    let per_full = b.div_ceil(ub);
    (tokens / b) * per_full + (tokens % b).div_ceil(ub)
}

impl Options {
    /// Refuses lists and sizes beyond [`MAX_COMBINATIONS`] and [`MAX_GRAPHS`].
    fn check_size(&self) -> Result<(), OptionError> {
        let combos = (self.n_pp.len() as u64)
            .saturating_mul(self.n_tg.len() as u64)
            .saturating_mul(self.n_pl.len() as u64);
        if combos > MAX_COMBINATIONS {
            return Err(OptionError::Invalid {
                program: PROG,
                message: format!(
                    "-npp, -ntg and -npl make {combos} combinations, more than the \
                     {MAX_COMBINATIONS} schedlab models"
                ),
            });
        }
        let graphs = self.graphs();
        if graphs > MAX_GRAPHS {
            return Err(OptionError::Invalid {
                program: PROG,
                message: format!(
                    "-c {} -b {} -ub {} with these -npp, -ntg, -npl lists asks for {graphs} \
                     graphs, more than the {MAX_GRAPHS} schedlab models in one run",
                    self.n_ctx, self.n_batch, self.n_ubatch
                ),
            });
        }
        Ok(())
    }

    /// Graphs the whole run computes: the warm-up, then per row that fits the context the
    /// prompt and `tg` decodes of `pl` tokens (saturating).
    pub fn graphs(&self) -> u64 {
        let mut n = graphs_of(16, self.n_batch, self.n_ubatch);
        for (pp, tg, pl) in self.rows() {
            let prompt = if self.is_pp_shared {
                u64::from(pp)
            } else {
                u64::from(pl) * u64::from(pp)
            };
            n = n
                .saturating_add(graphs_of(prompt, self.n_batch, self.n_ubatch))
                .saturating_add(u64::from(tg).saturating_mul(graphs_of(
                    u64::from(pl),
                    self.n_batch,
                    self.n_ubatch,
                )));
        }
        n
    }

    /// Threads of one-token graphs and of larger graphs on a machine with `ncpus` CPUs.
    pub fn thread_counts(&self, ncpus: usize) -> (u32, u32) {
        let t = self.threads.unwrap_or((ncpus as u32).clamp(1, MAX_THREADS));
        (t, self.threads_batch.unwrap_or(t))
    }

    /// The (pp, tg, pl) combinations in the tool's loop order, with whether each fits the
    /// context (`n_ctx_req ≤ n_kv_max`; the tool skips the others silently).
    pub fn rows(&self) -> Vec<(u32, u32, u32)> {
        let mut v = Vec::new();
        for &pp in &self.n_pp {
            for &tg in &self.n_tg {
                for &pl in &self.n_pl {
                    if self.n_kv(pp, tg, pl) <= self.n_ctx as u64 {
                        v.push((pp, tg, pl));
                    }
                }
            }
        }
        v
    }

    /// `n_ctx_req`: KV cells one combination uses (`pp + pl×tg` shared, else `pl×(pp+tg)`).
    pub fn n_kv(&self, pp: u32, tg: u32, pl: u32) -> u64 {
        if self.is_pp_shared {
            pp as u64 + pl as u64 * tg as u64
        } else {
            pl as u64 * (pp as u64 + tg as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn the_tools_command_line() {
        let o = p("-m q4.gguf -c 2048 -b 2048 -ub 512 -npp 128,256 -ntg 32 -npl 1,2 -pps -t 51")
            .unwrap();
        assert_eq!(o.model.as_deref(), Some("q4.gguf"));
        assert_eq!((o.n_ctx, o.n_batch, o.n_ubatch), (2048, 2048, 512));
        assert_eq!(
            (&o.n_pp, &o.n_tg, &o.n_pl),
            (&vec![128, 256], &vec![32], &vec![1, 2])
        );
        assert!(o.is_pp_shared);
        assert_eq!(o.thread_counts(80), (51, 51));
        let o = p("--threads 8 -tb 16 --ctx-size 512 --poll 0").unwrap();
        assert_eq!((o.thread_counts(80), o.poll), ((8, 16), 0));
        // defaults: 4096 cells, the CPU count
        let o = p("").unwrap();
        assert_eq!((o.n_ctx, o.thread_counts(80)), (4096, (80, 80)));
    }

    #[test]
    fn rows_skip_what_does_not_fit_the_context() {
        // -c 1024, not shared: pl × (pp + tg) = 1×(512+256) = 768 fits, 2×768 = 1536 does not
        let o = p("-c 1024 -npp 512 -ntg 256 -npl 1,2").unwrap();
        assert_eq!(o.rows(), vec![(512, 256, 1)]);
        // shared prompt: pp + pl×tg = 512 + 2×256 = 1024 fits
        let o = p("-c 1024 -npp 512 -ntg 256 -npl 1,2 -pps").unwrap();
        assert_eq!(o.rows(), vec![(512, 256, 1), (512, 256, 2)]);
    }

    #[test]
    fn errors_name_the_option() {
        let e = p("-t 51 --bogus 3").unwrap_err().to_string();
        assert!(e.contains("unknown option '--bogus'"), "{e}");
        let e = p("-t 0").unwrap_err().to_string();
        assert!(e.contains("-t") && e.contains("'0'"), "{e}");
        let e = p("-npl 1,x").unwrap_err().to_string();
        assert!(e.contains("-npl") && e.contains("'1,x'"), "{e}");
        let e = p("-ub").unwrap_err().to_string();
        assert!(
            e.contains("-ub") && e.contains("requires an argument"),
            "{e}"
        );
        let e = p("--poll 101").unwrap_err().to_string();
        assert!(e.contains("--poll") && e.contains("'101'"), "{e}");
        let e = p("-fa maybe").unwrap_err().to_string();
        assert!(e.contains("-fa") && e.contains("'maybe'"), "{e}");
        let e = p("stray").unwrap_err().to_string();
        assert!(e.contains("'stray'"), "{e}");
    }

    #[test]
    fn graph_counts_by_hand() {
        // 16 tokens, -b 2048 -ub 512: one graph
        assert_eq!(graphs_of(16, 2048, 512), 1);
        // 1000 tokens, -b 300 -ub 128: 3 full chunks of 300 (3 graphs each: 128+128+44)
        // and 100 left (1 graph) = 10
        assert_eq!(graphs_of(1000, 300, 128), 10);
        assert_eq!(graphs_of(0, 300, 128), 0);
        // the seed's row: warm-up 1, prompt 128 tokens 1 graph, 128 decodes of 1 token
        let o = p("-c 4096 -b 2048 -ub 512 -npp 128 -ntg 128 -npl 1").unwrap();
        assert_eq!(o.graphs(), 1 + 1 + 128);
    }

    #[test]
    fn huge_runs_are_refused_with_the_options_named() {
        // 1 + 1 + 4294967294 decodes of one token: over the 1 000 000 graph cap
        let e = p("-c 4294967295 -npp 1 -ntg 4294967294 -npl 1")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "llama-batched-bench: -c 4294967295 -b 2048 -ub 512 with these -npp, -ntg, -npl \
             lists asks for 4294967296 graphs, more than the 1000000 schedlab models in one run"
        );
        // a row that does not fit the default context costs nothing: 1 warm-up graph
        assert_eq!(p("-ntg 4294967295 -npp 1 -npl 1").unwrap().graphs(), 1);
        // 17 × 16 × 16 = 4352 combinations
        let l16 = (1..=16)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let l17 = (1..=17)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let e = p(&format!("-npp {l17} -ntg {l16} -npl {l16}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("4352 combinations, more than the 4096"), "{e}");
    }
}
