//! The NumPy `.npy` format, version 1.0 written, versions 1.0 to 3.0 read: one-dimensional,
//! little-endian arrays of `f64` (`<f8`, reals and probs), `i64` (`<i8`), `u64` (`<u8`,
//! nats) and `bool` (`|b1`).
//!
//! The file is the magic `\x93NUMPY`, two version bytes, the header's length (`u16` in
//! version 1, `u32` in 2 and 3), the header (a Python dict literal such as
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }` padded with spaces to a
//! multiple of 64 bytes and ended by a newline) and the elements back to back.
//!
//! Only what a data file of a Gibbs run needs: no multi-dimensional arrays, no big-endian
//! or other dtypes, no pickled objects. Those are errors that say which it was; nothing
//! here panics on a file's contents.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// The first six bytes of every `.npy` file.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// A one-dimensional array read from or written to a `.npy` file.
#[derive(Clone, Debug, PartialEq)]
pub enum NpyArray {
    /// `<f8`: reals and probs (probs on the linear scale).
    F64(Vec<f64>),
    /// `<i8`: signed integers.
    I64(Vec<i64>),
    /// `<u8`: nats.
    U64(Vec<u64>),
    /// `|b1`: booleans, one byte each (0 or 1).
    Bool(Vec<bool>),
}

impl NpyArray {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            NpyArray::F64(v) => v.len(),
            NpyArray::I64(v) => v.len(),
            NpyArray::U64(v) => v.len(),
            NpyArray::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dtype string of the header (`<f8`, `<i8`, `<u8`, `|b1`).
    pub fn descr(&self) -> &'static str {
        match self {
            NpyArray::F64(_) => "<f8",
            NpyArray::I64(_) => "<i8",
            NpyArray::U64(_) => "<u8",
            NpyArray::Bool(_) => "|b1",
        }
    }
}

/// Why bytes are not a `.npy` array this module reads.
#[derive(Debug)]
pub enum NpyError {
    /// The file could not be read.
    Io(io::Error),
    /// The first six bytes are not `\x93NUMPY`.
    BadMagic,
    /// A format version other than 1.0, 2.0 or 3.0.
    UnsupportedVersion(u8, u8),
    /// The file ends before the header or the data it announces.
    Truncated { needed: usize, found: usize },
    /// The header is not the dict literal the format prescribes (with the reason).
    BadHeader(String),
    /// A dtype other than `<f8`, `<i8`, `<u8` and `|b1` (big-endian, objects, ...).
    UnsupportedDtype(String),
    /// A shape with other than one dimension, or a Fortran-ordered array of more.
    NotOneDimensional(String),
    /// Bytes after the last element.
    TrailingBytes(usize),
    /// A `|b1` element that is neither 0 nor 1, at this index.
    BadBool(usize),
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "cannot read the .npy file: {e}"),
            NpyError::BadMagic => write!(f, "not a .npy file: it does not start with \\x93NUMPY"),
            NpyError::UnsupportedVersion(a, b) => {
                write!(
                    f,
                    ".npy format version {a}.{b} is not supported (1.0 to 3.0 are)"
                )
            }
            NpyError::Truncated { needed, found } => write!(
                f,
                "the .npy file is truncated: {needed} bytes needed, {found} present"
            ),
            NpyError::BadHeader(why) => write!(f, "malformed .npy header: {why}"),
            NpyError::UnsupportedDtype(d) => write!(
                f,
                "the .npy dtype '{d}' is not supported (use <f8, <i8, <u8 or |b1)"
            ),
            NpyError::NotOneDimensional(s) => write!(
                f,
                "the .npy array has shape {s}; only one-dimensional arrays are supported"
            ),
            NpyError::TrailingBytes(n) => {
                write!(f, "the .npy file has {n} bytes after its last element")
            }
            NpyError::BadBool(i) => {
                write!(f, "element {i} of the |b1 array is neither 0 nor 1")
            }
        }
    }
}

impl std::error::Error for NpyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NpyError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for NpyError {
    fn from(e: io::Error) -> NpyError {
        NpyError::Io(e)
    }
}

/// Writes `a` in format version 1.0 (header padded so the data starts at a multiple of
/// 64 bytes, as NumPy does).
pub fn write(out: &mut impl Write, a: &NpyArray) -> io::Result<()> {
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}",
        a.descr(),
        a.len()
    );
    // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let len = u16::try_from(header.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "npy header too long"))?;
    let mut bytes = Vec::with_capacity(10 + header.len() + a.len() * 8);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    match a {
        NpyArray::F64(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
        NpyArray::I64(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
        NpyArray::U64(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
        NpyArray::Bool(v) => bytes.extend(v.iter().map(|&b| u8::from(b))),
    }
    out.write_all(&bytes)
}

/// Writes `a` to the file `path` (created or truncated).
pub fn write_file(path: &Path, a: &NpyArray) -> io::Result<()> {
    let mut f = io::BufWriter::new(std::fs::File::create(path)?);
    write(&mut f, a)?;
    f.flush()
}

/// Reads the `.npy` file at `path`.
pub fn read_file(path: &Path) -> Result<NpyArray, NpyError> {
    read(&std::fs::read(path)?)
}

/// Reads a `.npy` array from its bytes.
pub fn read(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    if bytes.len() < 6 || &bytes[..6] != MAGIC {
        return Err(NpyError::BadMagic);
    }
    let (major, minor) = (byte(bytes, 6)?, byte(bytes, 7)?);
    let (len, start) = match (major, minor) {
        (1, 0) => (
            usize::from(u16::from_le_bytes([byte(bytes, 8)?, byte(bytes, 9)?])),
            10,
        ),
        (2, 0) | (3, 0) => {
            let b = slice(bytes, 8, 4)?;
            let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usize::try_from(len).map_err(|_| too_big())?, 12)
        }
        _ => return Err(NpyError::UnsupportedVersion(major, minor)),
    };
    let header = slice(bytes, start, len)?;
    let header = std::str::from_utf8(header)
        .map_err(|_| NpyError::BadHeader("the header is not text".into()))?;
    let h = parse_header(header)?;
    let n = h.len;
    let data = &bytes[start + len..];
    let width = if h.descr == "|b1" { 1 } else { 8 };
    let size = n.checked_mul(width).ok_or_else(too_big)?;
    if data.len() < size {
        return Err(NpyError::Truncated {
            needed: start + len + size,
            found: bytes.len(),
        });
    }
    if data.len() > size {
        return Err(NpyError::TrailingBytes(data.len() - size));
    }
    let words = || {
        data.chunks_exact(8).map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            w
        })
    };
    Ok(match h.descr.as_str() {
        "<f8" => NpyArray::F64(words().map(f64::from_le_bytes).collect()),
        "<i8" => NpyArray::I64(words().map(i64::from_le_bytes).collect()),
        "<u8" => NpyArray::U64(words().map(u64::from_le_bytes).collect()),
        _ => NpyArray::Bool(
            data.iter()
                .enumerate()
                .map(|(i, &b)| match b {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(NpyError::BadBool(i)),
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn too_big() -> NpyError {
    NpyError::BadHeader("the array is too large for this machine".into())
}

fn byte(bytes: &[u8], i: usize) -> Result<u8, NpyError> {
    bytes.get(i).copied().ok_or(NpyError::Truncated {
        needed: i + 1,
        found: bytes.len(),
    })
}

fn slice(bytes: &[u8], start: usize, len: usize) -> Result<&[u8], NpyError> {
    let end = start.checked_add(len).ok_or_else(too_big)?;
    bytes.get(start..end).ok_or(NpyError::Truncated {
        needed: end,
        found: bytes.len(),
    })
}

/// What the header says: the dtype and the number of elements.
struct Header {
    descr: String,
    len: usize,
}

/// A value of the header's dict literal.
#[derive(Debug)]
enum Lit {
    Str(String),
    /// `True` or `False` (only `fortran_order` has one, and for one dimension both
    /// orders are the same)
    Bool,
    Tuple(Vec<u64>),
}

/// Parses `{'descr': ..., 'fortran_order': ..., 'shape': (...), }` (keys in any order,
/// each exactly once, trailing commas allowed, the padding after the brace ignored).
fn parse_header(text: &str) -> Result<Header, NpyError> {
    let bad = |why: &str| NpyError::BadHeader(format!("{why} in {:?}", text.trim_end()));
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.expect(b'{').map_err(|_| bad("no opening brace"))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.skip_space();
        if p.eat(b'}') {
            break;
        }
        let key = p
            .string()
            .ok_or_else(|| bad("a key is not a quoted string"))?;
        p.skip_space();
        p.expect(b':').map_err(|_| bad("no ':' after a key"))?;
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran,
            "shape" => &mut shape,
            _ => return Err(bad(&format!("unknown key '{key}'"))),
        };
        let value = p.literal().ok_or_else(|| bad("a value cannot be read"))?;
        if slot.replace(value).is_some() {
            return Err(bad(&format!("the key '{key}' appears twice")));
        }
        p.skip_space();
        if !p.eat(b',') {
            p.skip_space();
            p.expect(b'}')
                .map_err(|_| bad("no ',' or '}' after a value"))?;
            break;
        }
    }
    if !text[p.i..].trim().is_empty() {
        return Err(bad("text after the closing brace"));
    }
    let descr = match descr {
        Some(Lit::Str(d)) => d,
        Some(_) => return Err(bad("'descr' is not a string")),
        None => return Err(bad("no 'descr'")),
    };
    match fortran {
        Some(Lit::Bool) => {}
        Some(_) => return Err(bad("'fortran_order' is not True or False")),
        None => return Err(bad("no 'fortran_order'")),
    }
    let dims = match shape {
        Some(Lit::Tuple(d)) => d,
        Some(_) => return Err(bad("'shape' is not a tuple")),
        None => return Err(bad("no 'shape'")),
    };
    if !matches!(descr.as_str(), "<f8" | "<i8" | "<u8" | "|b1") {
        return Err(NpyError::UnsupportedDtype(descr));
    }
    let [len] = dims[..] else {
        let shown: Vec<String> = dims.iter().map(u64::to_string).collect();
        return Err(NpyError::NotOneDimensional(format!(
            "({})",
            shown.join(", ")
        )));
    };
    let len = usize::try_from(len).map_err(|_| too_big())?;
    Ok(Header { descr, len })
}

/// A cursor over the header's bytes.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.s.get(self.i) == Some(&c);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn expect(&mut self, c: u8) -> Result<(), ()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(())
        }
    }

    /// A string in single or double quotes (no escapes: dtype strings have none).
    fn string(&mut self) -> Option<String> {
        let q = *self.s.get(self.i)?;
        if q != b'\'' && q != b'"' {
            return None;
        }
        let rest = self.s.get(self.i + 1..)?;
        let end = rest.iter().position(|&c| c == q)?;
        let out = std::str::from_utf8(&rest[..end]).ok()?.to_string();
        self.i += end + 2;
        Some(out)
    }

    fn literal(&mut self) -> Option<Lit> {
        self.skip_space();
        if let Some(s) = self.string() {
            return Some(Lit::Str(s));
        }
        for word in [&b"True"[..], &b"False"[..]] {
            if self.s.get(self.i..)?.starts_with(word) {
                self.i += word.len();
                return Some(Lit::Bool);
            }
        }
        if !self.eat(b'(') {
            return None;
        }
        let mut dims = Vec::new();
        loop {
            self.skip_space();
            if self.eat(b')') {
                return Some(Lit::Tuple(dims));
            }
            let from = self.i;
            while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
            }
            // NumPy writes plain integers; old versions wrote `3L`
            let digits = std::str::from_utf8(&self.s[from..self.i]).ok()?;
            dims.push(digits.parse().ok()?);
            self.eat(b'L');
            self.skip_space();
            if !self.eat(b',') {
                self.skip_space();
                return self.eat(b')').then_some(Lit::Tuple(dims));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(a: &NpyArray) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, a).expect("writing to memory");
        out
    }

    /// A file with the given header text and data, version 1.0.
    fn raw(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend([1, 0]);
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn every_dtype_round_trips() {
        for a in [
            NpyArray::F64(vec![0.0, -1.5, f64::MAX, f64::MIN_POSITIVE, 1e-300]),
            NpyArray::I64(vec![i64::MIN, -1, 0, 7, i64::MAX]),
            NpyArray::U64(vec![0, 1, u64::MAX]),
            NpyArray::Bool(vec![true, false, true]),
            NpyArray::F64(Vec::new()),
            NpyArray::U64((0..1000).collect()),
        ] {
            let b = bytes_of(&a);
            assert_eq!(read(&b).expect("round trip"), a);
        }
    }

    #[test]
    fn the_data_starts_at_a_multiple_of_64_bytes() {
        for n in [0, 9, 10, 12_345] {
            let b = bytes_of(&NpyArray::F64(vec![0.5; n]));
            assert_eq!((b.len() - 8 * n) % 64, 0, "{n} elements");
        }
    }

    #[test]
    fn numpys_own_header_layout_is_read() {
        // as `numpy.save` writes it, a two-element int64 array, header padded to 118
        let h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
        let mut text = h.to_string();
        text.push_str(&" ".repeat(117 - h.len()));
        text.push('\n');
        let mut data = Vec::new();
        data.extend(5i64.to_le_bytes());
        data.extend((-6i64).to_le_bytes());
        assert_eq!(
            read(&raw(&text, &data)).ok(),
            Some(NpyArray::I64(vec![5, -6]))
        );
    }

    #[test]
    fn bad_files_are_errors_that_say_why() {
        let good = bytes_of(&NpyArray::F64(vec![1.0, 2.0]));
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (Vec::new(), "not a .npy file"),
            (b"PK\x03\x04 a zip file".to_vec(), "not a .npy file"),
            (
                {
                    let mut b = good.clone();
                    b[6] = 4;
                    b
                },
                "version 4.0",
            ),
            (good[..9].to_vec(), "truncated"),
            (good[..good.len() - 3].to_vec(), "truncated"),
            (
                {
                    let mut b = good.clone();
                    b.push(0);
                    b
                },
                "1 bytes after",
            ),
            (
                raw(
                    "{'descr': '>f8', 'fortran_order': False, 'shape': (0,), }\n",
                    &[],
                ),
                "dtype '>f8'",
            ),
            (
                raw(
                    "{'descr': '|O', 'fortran_order': False, 'shape': (0,), }\n",
                    &[],
                ),
                "dtype '|O'",
            ),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
                    &[0; 32],
                ),
                "shape (2, 2)",
            ),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                    &[0; 8],
                ),
                "shape ()",
            ),
            (
                raw("{'descr': '<f8', 'shape': (1,), }\n", &[0; 8]),
                "no 'fortran_order'",
            ),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}\n",
                    &[0; 8],
                ),
                "unknown key",
            ),
            (
                raw(
                    "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}\n",
                    &[0; 8],
                ),
                "twice",
            ),
            (raw("'descr': '<f8'\n", &[]), "no opening brace"),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,)}\n",
                    &[0; 8],
                ),
                "cannot be read",
            ),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}\n",
                    &[],
                ),
                "cannot be read",
            ),
            (
                raw(
                    "{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}\n",
                    &[1, 2],
                ),
                "element 1",
            ),
            (
                raw(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} x\n",
                    &[0; 8],
                ),
                "after the closing brace",
            ),
            (
                {
                    let mut b = raw("{'descr': '<f8'}", &[]);
                    b[10] = 0xff;
                    b
                },
                "not text",
            ),
        ];
        for (bytes, says) in cases {
            match read(&bytes) {
                Ok(a) => panic!("{bytes:?} read as {a:?}; expected an error saying {says:?}"),
                Err(e) => assert!(e.to_string().contains(says), "{e} does not say {says:?}"),
            }
        }
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let e = read_file(Path::new("/nonexistent/slic-data/x.npy"));
        assert!(matches!(e, Err(NpyError::Io(_))), "{e:?}");
    }

    #[test]
    fn files_round_trip() {
        let dir = std::env::temp_dir().join(format!("slic-data-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("a.npy");
        let a = NpyArray::U64(vec![4, 8, 15, 16, 23, 42]);
        write_file(&path, &a).expect("write");
        assert_eq!(read_file(&path).expect("read"), a);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
