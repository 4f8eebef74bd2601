//! A minimal protobuf wire-format reader over a byte slice: varints, keys, length-delimited
//! sub-slices and skipping of unknown fields. Every error carries the absolute byte offset.

/// A decoding failure at an absolute byte offset of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    /// Offset of the offending byte in the whole input.
    pub offset: u64,
    /// What was expected.
    pub message: String,
    /// The input ends before the value (a length, number or key) it starts: at the top level
    /// of a file this means the file is truncated.
    pub truncated: bool,
    /// Not a decoding failure: the user cancelled the load.
    pub cancelled: bool,
}

impl WireError {
    /// A new error, boxed: keeps `Result<u64, Box<WireError>>` register-sized on the hot path.
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>) -> Box<Self> {
        Box::new(WireError {
            offset: offset as u64,
            message: message.into(),
            truncated: false,
            cancelled: false,
        })
    }

    /// An error for input that ends inside a value starting at `offset`.
    #[cold]
    pub fn cut(offset: usize, message: impl Into<String>) -> Box<Self> {
        let mut e = Self::new(offset, message);
        e.truncated = true;
        e
    }

    /// The error used to stop a walk when the user cancels.
    #[cold]
    pub fn cancelled(offset: usize) -> Box<Self> {
        let mut e = Self::new(offset, crate::formats::error::CANCELLED);
        e.cancelled = true;
        e
    }
}

/// Protobuf wire types.
pub const VARINT: u8 = 0;
/// Fixed 8 bytes.
pub const I64: u8 = 1;
/// Length-delimited.
pub const LEN: u8 = 2;
/// Fixed 4 bytes.
pub const I32: u8 = 5;

/// Bit set of the accepted wire types (VARINT, I64, LEN, I32).
const KEY_TYPES: u8 = (1 << VARINT) | (1 << I64) | (1 << LEN) | (1 << I32);

/// A cursor over one message's bytes; `base` is the absolute offset of `data[0]`.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `data`, which starts at absolute offset `base` of the input.
    #[inline]
    pub fn new(data: &'a [u8], base: usize) -> Self {
        Reader { data, pos: 0, base }
    }

    /// True when every byte was consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// An error at the current position.
    #[cold]
    pub fn err(&self, message: impl Into<String>) -> Box<WireError> {
        WireError::new(self.offset(), message)
    }

    /// Reads a varint (up to 10 bytes; the 10th may only carry bit 63).
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, Box<WireError>> {
        if let Some(&b) = self.data.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        // Fast path: at least 10 bytes left, no bounds checks in the loop.
        if let Some(w) = self.data.get(self.pos..self.pos + 10)
            && let Ok(w) = <&[u8; 10]>::try_from(w)
        {
            let mut v = 0u64;
            for (i, &b) in w.iter().enumerate().take(9) {
                v |= u64::from(b & 0x7f) << (7 * i);
                if b < 0x80 {
                    self.pos += i + 1;
                    return Ok(v);
                }
            }
            if w[9] <= 1 {
                self.pos += 10;
                return Ok(v | (u64::from(w[9]) << 63));
            }
        }
        self.varint_tail()
    }

    /// A multi-byte varint with fewer than 10 bytes left (the last field of a message): one
    /// bounds-checked pass, not cold (every stat value ends its message).
    #[inline(never)]
    fn varint_tail(&mut self) -> Result<u64, Box<WireError>> {
        let start = self.pos;
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(WireError::cut(
                    self.base + start,
                    "truncated varint (input ends inside a number)",
                ));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(WireError::new(
                    self.base + start,
                    "malformed varint (more than 64 bits)",
                ));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(WireError::new(
            self.base + start,
            "malformed varint (longer than 10 bytes)",
        ))
    }

    /// The next byte, if any (not consumed).
    #[inline(always)]
    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Consumes one byte (after [`Reader::peek`] saw it).
    #[inline(always)]
    pub fn bump(&mut self) {
        self.pos += 1;
    }

    /// Reads a field key: `(field number, wire type)`. Rejects wire types 3, 4, 6, 7 and field 0.
    #[inline(always)]
    pub fn key(&mut self) -> Result<(u32, u8), Box<WireError>> {
        // Fast path: a one-byte key (fields 1..=15) of wire type VARINT, I64, LEN or I32.
        if let Some(&b) = self.data.get(self.pos)
            && (8..0x80).contains(&b)
            && (1u8 << (b & 7)) & KEY_TYPES != 0
        {
            self.pos += 1;
            return Ok((u32::from(b >> 3), b & 7));
        }
        let at = self.pos;
        let k = self.varint()?;
        let wt = (k & 7) as u8;
        let field = k >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(WireError::new(
                self.base + at,
                format!("invalid field number {field} in a protobuf key"),
            ));
        }
        if !matches!(wt, VARINT | I64 | LEN | I32) {
            return Err(WireError::new(
                self.base + at,
                format!(
                    "invalid or unsupported wire type {wt} (field {field}): not an XSpace protobuf, or corrupted"
                ),
            ));
        }
        Ok((field as u32, wt))
    }

    /// Reads a length-delimited payload and returns a reader over it.
    #[inline(always)]
    pub fn sub(&mut self) -> Result<Reader<'a>, Box<WireError>> {
        let at = self.pos;
        let len = self.varint()?;
        let rest = self.data.len() - self.pos;
        if len > rest as u64 {
            return Err(WireError::cut(
                self.base + at,
                format!(
                    "length {len} runs past the end of its message ({rest} bytes left): truncated or corrupted"
                ),
            ));
        }
        let len = len as usize;
        let r = Reader {
            data: &self.data[self.pos..self.pos + len],
            pos: 0,
            base: self.base + self.pos,
        };
        self.pos += len;
        Ok(r)
    }

    /// Reads a length-delimited payload as raw bytes.
    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8], Box<WireError>> {
        Ok(self.sub()?.data)
    }

    /// Reads 8 little-endian bytes.
    #[inline(always)]
    pub fn fixed64(&mut self) -> Result<u64, Box<WireError>> {
        match self.data.get(self.pos..self.pos + 8) {
            Some(b) => {
                self.pos += 8;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(u64::from_le_bytes(a))
            }
            None => Err(WireError::cut(self.offset(), "truncated fixed64 value")),
        }
    }

    /// Reads a scalar of wire type VARINT or I64 as u64 (I32 too); other types are an error.
    #[inline(always)]
    pub fn scalar(&mut self, wt: u8) -> Result<u64, Box<WireError>> {
        match wt {
            VARINT => self.varint(),
            I64 => self.fixed64(),
            I32 => self.fixed32().map(u64::from),
            _ => Err(self.err(format!("expected a number, found wire type {wt}"))),
        }
    }

    /// Reads 4 little-endian bytes.
    #[inline]
    pub fn fixed32(&mut self) -> Result<u32, Box<WireError>> {
        match self.data.get(self.pos..self.pos + 4) {
            Some(b) => {
                self.pos += 4;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                Ok(u32::from_le_bytes(a))
            }
            None => Err(WireError::cut(self.offset(), "truncated fixed32 value")),
        }
    }

    /// Skips one field value of wire type `wt`.
    #[inline]
    pub fn skip(&mut self, wt: u8) -> Result<(), Box<WireError>> {
        match wt {
            VARINT => self.varint().map(|_| ()),
            I64 => self.fixed64().map(|_| ()),
            I32 => self.fixed32().map(|_| ()),
            LEN => self.sub().map(|_| ()),
            _ => Err(self.err(format!("cannot skip wire type {wt}"))),
        }
    }

    /// The whole underlying slice.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Absolute offset of `data[0]`.
    pub fn base(&self) -> usize {
        self.base
    }
}

/// Reads a LEN field expected to hold a message, or reports a wrong wire type.
#[inline(always)]
pub fn expect_len<'a>(
    r: &mut Reader<'a>,
    wt: u8,
    what: &str,
) -> Result<Reader<'a>, Box<WireError>> {
    if wt != LEN {
        return Err(r.err(format!(
            "{what}: expected a length-delimited field, found wire type {wt}"
        )));
    }
    r.sub()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(mut v: u64) -> Vec<u8> {
        let mut o = Vec::new();
        while v >= 0x80 {
            o.push((v as u8) | 0x80);
            v >>= 7;
        }
        o.push(v as u8);
        o
    }

    #[test]
    fn varints_roundtrip_including_negative() {
        for v in [0u64, 1, 127, 128, 300, u64::MAX, (-5i64) as u64, 1 << 63] {
            let b = enc(v);
            let mut r = Reader::new(&b, 0);
            assert_eq!(r.varint(), Ok(v));
            assert!(r.is_empty());
        }
        assert_eq!(enc((-1i64) as u64).len(), 10);
    }

    #[test]
    fn errors_carry_offsets() {
        let mut r = Reader::new(&[0x80, 0x80], 100);
        assert_eq!(r.varint().map_err(|e| e.offset), Err(100));
        let mut r = Reader::new(&[0x0f], 7); // field 1, wire type 7
        let e = r.key().unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(e.message.contains("wire type 7"));
        let mut r = Reader::new(&[0x0a, 0x05, 1], 0); // LEN 5 with 1 byte left
        assert_eq!(r.key(), Ok((1, LEN)));
        assert_eq!(r.sub().map_err(|e| e.offset).err(), Some(1));
        let mut r = Reader::new(&[0xff; 11], 0);
        assert!(r.varint().is_err());
    }
}
