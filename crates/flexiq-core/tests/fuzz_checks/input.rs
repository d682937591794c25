//! How a check reads its input: newline-separated fields of raw bytes.
//!
//! Every check takes plain bytes, so one body serves libFuzzer (which hands out bytes), the
//! proptest twins (whose structured strategies join fields with `\n`) and the corpus replay, and
//! so corpus files stay readable text. A field that should be a number but does not parse as one
//! still yields a number (a hash of its bytes), so no input is wasted on a parse failure.

use flexiq_core::cursor::fingerprint;

/// The fields of one input, read front to back; reading past the end gives empty fields.
pub(crate) struct Fields<'a> {
    parts: Vec<&'a [u8]>,
    next: usize,
}

impl<'a> Fields<'a> {
    /// Splits `data` at every `\n`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Fields { parts: data.split(|b| *b == b'\n').collect(), next: 0 }
    }

    /// The next field as raw bytes.
    pub(crate) fn bytes(&mut self) -> &'a [u8] {
        let part = self.parts.get(self.next).copied().unwrap_or_default();
        self.next += 1;
        part
    }

    /// The next field as text (invalid UTF-8 replaced).
    pub(crate) fn text(&mut self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    /// The next field as text, `None` when it is empty.
    pub(crate) fn opt_text(&mut self) -> Option<String> {
        Some(self.text()).filter(|t| !t.is_empty())
    }

    /// Everything not read yet, newlines included.
    pub(crate) fn rest(&mut self) -> Vec<u8> {
        let rest = self.parts.get(self.next..).unwrap_or_default().join(&b'\n');
        self.next = self.parts.len();
        rest
    }

    /// The next field as a number: its decimal value, or a hash of its bytes when it is not one.
    pub(crate) fn u64(&mut self) -> u64 {
        let part = self.bytes();
        std::str::from_utf8(part)
            .ok()
            .and_then(|t| {
                t.trim().parse::<u64>().ok().or_else(|| t.trim().parse::<i64>().ok().map(|v| v as u64))
            })
            .unwrap_or_else(|| fingerprint(&[&String::from_utf8_lossy(part)]))
    }

    /// The next field as a signed number (see [`Fields::u64`]).
    pub(crate) fn i64(&mut self) -> i64 {
        self.u64() as i64
    }

    /// The next field as a `u32` (the low bits of [`Fields::u64`]).
    pub(crate) fn u32(&mut self) -> u32 {
        self.u64() as u32
    }

    /// The next field as a number, `None` when it is empty.
    pub(crate) fn opt_i64(&mut self) -> Option<i64> {
        if self.parts.get(self.next).is_some_and(|p| p.is_empty()) || self.next >= self.parts.len() {
            self.next += 1;
            return None;
        }
        Some(self.i64())
    }

    /// The next field as a flag: `1` / `true` set, anything else clear.
    pub(crate) fn flag(&mut self) -> bool {
        matches!(self.bytes(), b"1" | b"true")
    }
}
