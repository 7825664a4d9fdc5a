//! What `llama-batched-bench` prints (workloads.md §9.3): the `main:` parameter line and the
//! Markdown table, one row per (pp, tg, pl) combination. The tool times with `ggml_time_us()`
//! and computes in `float`: `t_pp = (t_pp_end − t_pp_start) / 1e6f`, and so on; so does this.

/// The measured times of one row, in whole µs as `ggml_time_us()` reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowTimes {
    pub pp: u32,
    pub tg: u32,
    pub pl: u32,
    pub n_kv: u32,
    pub pp_start_us: u64,
    pub pp_end_us: u64,
    pub tg_start_us: u64,
    pub tg_end_us: u64,
}

/// One row's figures as the tool computes them (single precision).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub pp: u32,
    pub tg: u32,
    pub pl: u32,
    pub n_kv: u32,
    pub t_pp: f32,
    pub speed_pp: f32,
    pub t_tg: f32,
    pub speed_tg: f32,
    pub t: f32,
    pub speed: f32,
}

impl Row {
    /// `S_PP = (pps ? pp : pl×pp) / T_PP`, `S_TG = pl×tg / T_TG`, `S = N_KV / (T_PP + T_TG)`.
    pub fn compute(r: &RowTimes, is_pp_shared: bool) -> Row {
        let t_pp = (r.pp_end_us - r.pp_start_us) as f32 / 1_000_000.0f32;
        let t_tg = (r.tg_end_us - r.tg_start_us) as f32 / 1_000_000.0f32;
        let t = t_pp + t_tg;
        let pp_tokens = if is_pp_shared { r.pp } else { r.pl * r.pp };
        Row {
            pp: r.pp,
            tg: r.tg,
            pl: r.pl,
            n_kv: r.n_kv,
            t_pp,
            speed_pp: pp_tokens as f32 / t_pp,
            t_tg,
            speed_tg: (r.pl * r.tg) as f32 / t_tg,
            t,
            speed: r.n_kv as f32 / t,
        }
    }
}

/// The parameter line, preceded by the blank line the tool prints.
#[allow(clippy::too_many_arguments)]
pub fn header(
    n_kv_max: u32,
    n_batch: u32,
    n_ubatch: u32,
    flash_attn: i32,
    is_pp_shared: bool,
    n_gpu_layers: i32,
    n_threads: u32,
    n_threads_batch: u32,
) -> String {
    format!(
        "\nmain: n_kv_max = {n_kv_max}, n_batch = {n_batch}, n_ubatch = {n_ubatch}, flash_attn = \
         {flash_attn}, is_pp_shared = {}, n_gpu_layers = {n_gpu_layers}, n_threads = \
         {n_threads}, n_threads_batch = {n_threads_batch}\n\n",
        is_pp_shared as i32
    )
}

/// The table's two heading lines.
pub fn table_head() -> String {
    format!(
        "|{:>6} | {:>6} | {:>4} | {:>6} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} |\n\
         |{:>6}-|-{:>6}-|-{:>4}-|-{:>6}-|-{:>8}-|-{:>8}-|-{:>8}-|-{:>8}-|-{:>8}-|-{:>8}-|\n",
        "PP",
        "TG",
        "B",
        "N_KV",
        "T_PP s",
        "S_PP t/s",
        "T_TG s",
        "S_TG t/s",
        "T s",
        "S t/s",
        "------",
        "------",
        "----",
        "------",
        "--------",
        "--------",
        "--------",
        "--------",
        "--------",
        "--------",
    )
}

/// One row: `|%6d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |`.
pub fn row_line(r: &Row) -> String {
    format!(
        "|{:6} | {:6} | {:4} | {:6} | {:8.3} | {:8.2} | {:8.3} | {:8.2} | {:8.3} | {:8.2} |\n",
        r.pp, r.tg, r.pl, r.n_kv, r.t_pp, r.speed_pp, r.t_tg, r.speed_tg, r.t, r.speed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s_tg_is_pl_times_tg_over_t_tg() {
        // pp 128, tg 32, pl 2: prompt 0.5 s (256 tokens → 512 t/s), generation 2 s
        // (64 tokens → 32 t/s); N_KV = 2 × 160 = 320 over 2.5 s = 128 t/s
        let t = RowTimes {
            pp: 128,
            tg: 32,
            pl: 2,
            n_kv: 320,
            pp_start_us: 1_000_000,
            pp_end_us: 1_500_000,
            tg_start_us: 1_500_000,
            tg_end_us: 3_500_000,
        };
        let r = Row::compute(&t, false);
        assert_eq!((r.t_pp, r.speed_pp), (0.5, 512.0));
        assert_eq!((r.t_tg, r.speed_tg), (2.0, 32.0));
        assert_eq!((r.t, r.speed), (2.5, 128.0));
        // shared prompt: S_PP counts the prompt once (128 / 0.5 = 256 t/s)
        assert_eq!(Row::compute(&t, true).speed_pp, 256.0);
    }

    #[test]
    fn table_lines_are_the_tools() {
        let head = table_head();
        assert_eq!(
            head,
            "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n\
             |-------|--------|------|--------|----------|----------|----------|----------|----------|----------|\n"
        );
        // the example row of workloads.md §9.3 (its figures as f32)
        let r = Row {
            pp: 128,
            tg: 128,
            pl: 1,
            n_kv: 256,
            t_pp: 0.812,
            speed_pp: 157.64,
            t_tg: 4.261,
            speed_tg: 30.04,
            t: 5.073,
            speed: 50.46,
        };
        assert_eq!(
            row_line(&r),
            "|   128 |    128 |    1 |    256 |    0.812 |   157.64 |    4.261 |    30.04 |    5.073 |    50.46 |\n"
        );
        assert_eq!(
            header(4096, 2048, 512, -1, false, -1, 51, 51),
            "\nmain: n_kv_max = 4096, n_batch = 2048, n_ubatch = 512, flash_attn = -1, \
             is_pp_shared = 0, n_gpu_layers = -1, n_threads = 51, n_threads_batch = 51\n\n"
        );
    }
}
