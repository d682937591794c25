//! How commands print: human tables by default, JSON with `--json`.
//!
//! Every command builds its answer as data first and then hands it to [`Output`], so the
//! table and the JSON always say the same thing. Tables use comfy-table; timestamps (Unix ms)
//! are shown as UTC date-times that name their zone in tables (formatted by jiff) and kept as
//! numbers in JSON.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde::Serialize;

use crate::error::{CliError, CliResult};

/// Where and how a command prints its answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    /// Print JSON instead of tables.
    pub json: bool,
}

impl Output {
    /// Prints `value` as pretty JSON.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> CliResult {
        let text = serde_json::to_string_pretty(value)
            .map_err(|e| CliError::other(format!("cannot encode the answer as json: {e}")))?;
        outln!("{text}");
        Ok(())
    }

    /// Prints `value` as JSON in JSON mode, else runs `human`.
    pub fn emit<T: Serialize + ?Sized>(&self, value: &T, human: impl FnOnce()) -> CliResult {
        if self.json {
            self.json(value)
        } else {
            human();
            Ok(())
        }
    }
}

/// A table with flexiq's look and the given header.
pub fn table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(header);
    t
}

/// A Unix ms timestamp as `YYYY-MM-DD HH:MM:SS.mmm UTC`, the zone always spelled out.
///
/// A value outside the calendar jiff can represent (about the years -9999 to 9999) is shown
/// as the raw number with the reason, never a panic: the store hands back whatever was
/// written.
pub fn time(unix_ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(unix_ms) {
        Ok(ts) => ts.strftime("%Y-%m-%d %H:%M:%S%.3f UTC").to_string(),
        Err(_) => format!("{unix_ms} ms since 1970 UTC (out of the calendar's range)"),
    }
}

/// When a job may run: its time, or for a LIFO job (a negative `run_at`, minus the time it
/// was placed) that it is due and when it was placed.
pub fn run_at(unix_ms: i64) -> String {
    if flexiq::core::store::is_lifo(unix_ms) {
        format!("due (LIFO, placed {})", time(unix_ms.saturating_neg()))
    } else {
        time(unix_ms)
    }
}

/// An optional Unix ms timestamp, `-` when absent.
pub fn opt_time(unix_ms: Option<i64>) -> String {
    unix_ms.map_or_else(|| "-".to_string(), time)
}

/// Optional text, `-` when absent.
pub fn opt_text(text: Option<&str>) -> String {
    text.map_or_else(|| "-".to_string(), str::to_string)
}

/// Text shortened to `max` characters with an ellipsis.
pub fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A duration in ms with one decimal.
pub fn ms(value: f64) -> String {
    format!("{value:.1}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times_with_their_zone() {
        assert_eq!(time(0), "1970-01-01 00:00:00.000 UTC");
        assert_eq!(time(1_700_000_000_123), "2023-11-14 22:13:20.123 UTC");
        // A leap day, and the last millisecond before one in a century year that is not a leap year.
        assert_eq!(time(951_782_400_000), "2000-02-29 00:00:00.000 UTC");
        assert_eq!(time(4_107_542_399_999), "2100-02-28 23:59:59.999 UTC");
        // Before the epoch: negative ms count back, the fraction stays positive.
        assert_eq!(time(-1), "1969-12-31 23:59:59.999 UTC");
        // Far future: near the end of the range jiff keeps (every offset applied stays in year 9999).
        assert_eq!(time(253_402_128_000_000), "9999-12-30 00:00:00.000 UTC");
        assert_eq!(opt_time(Some(86_400_000)), "1970-01-02 00:00:00.000 UTC");
        assert_eq!(opt_time(None), "-");
    }

    #[test]
    fn out_of_range_times_format_without_panicking() {
        for ms in [i64::MIN, i64::MAX, 253_402_300_800_000, -377_705_116_800_001] {
            let shown = time(ms);
            assert!(shown.starts_with(&ms.to_string()), "{shown}");
            assert!(shown.contains("UTC") && shown.contains("out of the calendar's range"), "{shown}");
        }
    }

    #[test]
    fn shortens_long_text() {
        assert_eq!(short("abc", 5), "abc");
        assert_eq!(short("abcdefgh", 5), "abcd…");
        assert_eq!(short("a\nb", 5), "a b");
    }
}
