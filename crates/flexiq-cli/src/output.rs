//! How commands print: human tables by default, JSON with `--json`.
//!
//! Every command builds its answer as data first and then hands it to [`Output`], so the
//! table and the JSON always say the same thing. Tables use comfy-table; timestamps (Unix ms)
//! are shown as UTC date-times in tables and kept as numbers in JSON.

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

/// A Unix ms timestamp as `YYYY-MM-DD HH:MM:SS.mmm` UTC.
pub fn time(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1_000);
    let ms = unix_ms.rem_euclid(1_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ms:03}", rem / 3_600, rem % 3_600 / 60, rem % 60)
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

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_times() {
        assert_eq!(time(0), "1970-01-01 00:00:00.000");
        assert_eq!(time(1_700_000_000_123), "2023-11-14 22:13:20.123");
        assert_eq!(time(951_782_400_000), "2000-02-29 00:00:00.000");
        assert_eq!(opt_time(None), "-");
    }

    #[test]
    fn shortens_long_text() {
        assert_eq!(short("abc", 5), "abc");
        assert_eq!(short("abcdefgh", 5), "abcd…");
        assert_eq!(short("a\nb", 5), "a b");
    }
}
